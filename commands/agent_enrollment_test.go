package commands_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const (
	enrollKeyA = "UBPIDXD2W3GUVR2JKHYTB3VMASR3SYINR6QGR5AN7WHZ7MFPMFOULPXO"
	enrollKeyB = "UAAUHARLVOC5TZPYWKE2KK56V672S4GZT66H6I4PFNLJWRJMTTM3J56Y"
)

func TestAgentEnrollmentCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := e.handlers
	offer := func(actor commands.Principal) error {
		_, err := h.OfferAgentEnrollment.Handle(ctx, e.md, commands.OfferAgentEnrollment{Actor: actor, AgentID: "gpu-1",
			Digest: digest, ExpiresAt: t0.Add(time.Hour)})
		return err
	}
	wantKind(t, offer(acmeAdmin), domain.KindForbidden)
	if err := offer(superadmin); err != nil {
		t.Fatal(err)
	}
	if _, err := h.EnrollAgent.Handle(ctx, e.md, commands.EnrollAgent{AgentID: "gpu-1", Digest: digest, UserKey: enrollKeyA}); err != nil {
		t.Fatal(err)
	}
	_, err := h.EnrollAgent.Handle(ctx, e.md, commands.EnrollAgent{AgentID: "gpu-1", Digest: digest, UserKey: enrollKeyB})
	if !errors.Is(err, domain.ErrUnauthenticated) {
		t.Fatalf("second use: %v", err)
	}
	_, err = h.RevokeAgentEnrollment.Handle(ctx, e.md, commands.RevokeAgentEnrollment{Actor: acmeAdmin, AgentID: "gpu-1"})
	wantKind(t, err, domain.KindForbidden)
	if _, err := h.RevokeAgentEnrollment.Handle(ctx, e.md, commands.RevokeAgentEnrollment{Actor: superadmin, AgentID: "gpu-1"}); err != nil {
		t.Fatal(err)
	}
	wantTypes(t, e.types(t, domain.AgentEnrollmentStream("gpu-1").String()),
		domain.TypeAgentEnrollmentOffered, domain.TypeAgentEnrolled, domain.TypeAgentEnrollmentRevoked)
}

// Many agents racing with one token: exactly one enrolls.
func TestEnrollAgentTokenIsUsedOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := e.handlers
	if _, err := h.OfferAgentEnrollment.Handle(ctx, e.md, commands.OfferAgentEnrollment{Actor: superadmin, AgentID: "gpu-1",
		Digest: digest, ExpiresAt: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	const racers = 8
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := enrollKeyA
			if i%2 == 1 {
				key = enrollKeyB
			}
			_, errs[i] = h.EnrollAgent.Handle(ctx, e.md, commands.EnrollAgent{AgentID: "gpu-1", Digest: digest, UserKey: key})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, domain.ErrUnauthenticated):
			t.Errorf("a loser got %v, want the refusal", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d enrollments succeeded with one token", ok)
	}
	wantTypes(t, e.types(t, domain.AgentEnrollmentStream("gpu-1").String()), domain.TypeAgentEnrollmentOffered, domain.TypeAgentEnrolled)
}
