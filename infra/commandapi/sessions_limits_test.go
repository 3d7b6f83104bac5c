package commandapi_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/await"
)

// limitsView is what GET /v1/sessions/{id} says of a session's limits.
type limitsView struct {
	Status      string     `json:"status"`
	ScheduledAt *time.Time `json:"scheduled_at"`
	StartedAt   *time.Time `json:"started_at"`
	LastUsedAt  *time.Time `json:"last_used_at"`
	Idle        *struct {
		TimeoutSeconds int64     `json:"timeout_seconds"`
		Since          time.Time `json:"since"`
		EndsAt         time.Time `json:"ends_at"`
	} `json:"idle"`
	Lifetime *struct {
		EndsAt time.Time `json:"ends_at"`
	} `json:"lifetime"`
}

// TestGetSessionShowsItsLimits: a running interactive session shows when
// it ends if unused (idle: the policy's timeout, counted from its start or
// its last use, which a request about it moves) and for its lifetime
// (from its scheduling); a session being torn down shows neither.
func TestGetSessionShowsItsLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{accessLog: true})
	e.run(t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		idle, life := int64(600), int64(7200)
		return h.ModifyKeypairPolicy.Handle(ctx, testMD, commands.ModifyKeypairPolicy{Actor: system, Name: "default",
			Changes: domain.KeypairPolicyChanges{IdleTimeout: &idle, MaxSessionLifetime: &life}})
	})
	e.registerAgent(t, "node-a")
	c := e.create(t, aliceToken, validBody)
	e.schedule(t, c, "node-a", "")
	res, err := e.handlers.ReportKernelStatus.Handle(context.Background(), testMD, commands.ReportKernelStatus{SessionID: uuid.MustParse(c.ID),
		KernelID: uuid.MustParse(c.KernelIDs[0]), AgentID: "node-a", Phase: domain.PhaseRunning, ContainerID: "c-1"})
	if err != nil {
		t.Fatal(err)
	}
	get := func(position uint64) limitsView {
		t.Helper()
		var v limitsView
		r := e.do(t, "GET", "/v1/sessions/"+c.ID+"?wait_for_position="+strconv.FormatUint(position, 10), aliceToken, "")
		if r.status != http.StatusOK {
			t.Fatalf("GET: %d %s", r.status, r.body)
		}
		r.decode(t, &v)
		return v
	}
	v := get(res.Position)
	if v.Status != "RUNNING" || v.Idle == nil || v.Lifetime == nil || v.StartedAt == nil || v.ScheduledAt == nil {
		t.Fatalf("session %+v", v)
	}
	if v.Idle.TimeoutSeconds != 600 || !v.Idle.Since.Equal(*v.StartedAt) || !v.Idle.EndsAt.Equal(v.StartedAt.Add(10*time.Minute)) ||
		!v.Lifetime.EndsAt.Equal(v.ScheduledAt.Add(2*time.Hour)) {
		t.Fatalf("idle %+v, lifetime %+v, started %v, scheduled %v", *v.Idle, *v.Lifetime, v.StartedAt, v.ScheduledAt)
	}

	// The request above is a use: once its record is folded, idleness
	// counts from it.
	e.clock.Advance(2 * time.Minute)
	await.Until(t, waitBound, "the request's use to show", func() bool {
		v = get(0)
		return v.LastUsedAt != nil && v.LastUsedAt.After(*v.StartedAt)
	})
	if !v.Idle.Since.Equal(*v.LastUsedAt) || !v.Idle.EndsAt.Equal(v.LastUsedAt.Add(10*time.Minute)) {
		t.Fatalf("idle %+v, last used %v", *v.Idle, v.LastUsedAt)
	}

	pos := e.delete(t, aliceToken, c.ID, 0, http.StatusAccepted).Position
	if v := get(pos); v.Status != "TERMINATING" || v.Idle != nil || v.Lifetime != nil {
		t.Fatalf("terminating session %+v", v)
	}
}
