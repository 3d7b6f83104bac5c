package commandapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
)

// explanation is the part of GET /v1/sessions/{id}/pending the tests read.
type explanation struct {
	SessionID    string  `json:"session_id"`
	Status       string  `json:"status"`
	Pending      bool    `json:"pending"`
	PlaceableNow bool    `json:"placeable_now"`
	Reason       string  `json:"reason"`
	Checks       []check `json:"checks"`
	Queue        *struct {
		Position int    `json:"position"`
		Length   int    `json:"length"`
		Order    string `json:"order"`
	} `json:"queue"`
	EstimatedStart *string `json:"estimated_start"`
	Estimate       string  `json:"estimate"`
}

type check struct {
	Code             string `json:"code"`
	Check            string `json:"check"`
	Message          string `json:"message"`
	Slot             string `json:"slot"`
	SessionID        string `json:"session_id"`
	Used             string `json:"used"`
	Limit            string `json:"limit"`
	LargestFree      string `json:"largest_free"`
	LargestFreeAgent string `json:"largest_free_agent"`
	FreeTotal        string `json:"free_total"`
}

// pending reads why a session waits, after position.
func (e *env) pending(t *testing.T, token, id string, position uint64) explanation {
	t.Helper()
	r := e.do(t, "GET", fmt.Sprintf("/v1/sessions/%s/pending?wait_for_position=%d", id, position), token, "")
	if r.status != http.StatusOK {
		t.Fatalf("pending %s: %d %s", id, r.status, r.body)
	}
	var x explanation
	r.decode(t, &x)
	return x
}

// queueOf reads the scheduler's queue as token's caller.
func (e *env) queueOf(t *testing.T, token, query string, position uint64) (ids []string, items []explanationItem) {
	t.Helper()
	r := e.do(t, "GET", fmt.Sprintf("/v1/scheduler/queue?wait_for_position=%d&%s", position, query), token, "")
	if r.status != http.StatusOK {
		t.Fatalf("queue: %d %s", r.status, r.body)
	}
	var page struct {
		Items      []explanationItem `json:"items"`
		NextCursor *string           `json:"next_cursor"`
	}
	r.decode(t, &page)
	for _, it := range page.Items {
		ids = append(ids, it.SessionID)
	}
	return ids, page.Items
}

type explanationItem struct {
	SessionID string  `json:"session_id"`
	Position  int     `json:"position"`
	Checks    []check `json:"checks"`
}

// occupy places a new session of alice's on agent, holding the given
// amount of each device (GPU-0, GPU-1), as the scheduler would; it
// returns the position.
func (e *env) occupy(t *testing.T, agent, resources string, devices map[string]string) uint64 {
	t.Helper()
	c := e.create(t, aliceToken, `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g",`+resources+`}}`)
	p := domain.KernelPlacement{KernelID: uuid.MustParse(c.KernelIDs[0]), AgentID: agent}
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range devices {
			if !yield(id) {
				return
			}
		}
	}) {
		q, err := domain.ParseQuantity(devices[id], domain.SlotCount)
		if err != nil {
			t.Fatal(err)
		}
		p.Devices = append(p.Devices, domain.DeviceShare{DeviceID: id, Amount: q})
	}
	res, err := e.handlers.ScheduleSession.Handle(context.Background(), testMD, commands.ScheduleSession{SessionID: uuid.MustParse(c.ID), Kernels: []domain.KernelPlacement{p}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Position
}

// fragmented is two agents with two GPUs each, one GPU taken whole and
// half of the other: 0.5 GPU free on each agent, 1 GPU in total.
func fragmented(t *testing.T, e *env) {
	t.Helper()
	for _, a := range []string{"node-a", "node-b"} {
		e.registerAgent(t, a)
		e.occupy(t, a, `"cuda.shares":"1.5"`, map[string]string{"GPU-0": "1", "GPU-1": "0.5"})
	}
}

func codes(cs []check) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Code)
	}
	return out
}

// TestExplainFragmented: two agents with 0.5 GPU free each and a request
// of 1 GPU is explained as fragmentation (with the largest free block and
// where it is), not as a lack of capacity; a request of 1.5 GPU, which
// the whole cluster does not have free, as not enough. Under fifo the
// second waits behind the first (blocked), at position 2.
func TestExplainFragmented(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	fragmented(t, e)
	one := e.create(t, bobToken, `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g","cuda.shares":"1"}}`)
	big := e.create(t, bobToken, `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g","cuda.shares":"1.5"}}`)

	x := e.pending(t, bobToken, one.ID, big.Position)
	if !x.Pending || x.PlaceableNow || x.Reason != domain.ReasonNoAvailableInstances || x.Queue == nil ||
		x.Queue.Position != 1 || x.Queue.Length != 2 || x.Queue.Order != "fifo" || x.EstimatedStart != nil || x.Estimate == "" {
		t.Fatalf("explanation %+v", x)
	}
	if len(x.Checks) != 1 {
		t.Fatalf("checks %+v", x.Checks)
	}
	c := x.Checks[0]
	want := "fragmented: largest free block 0.5 GPU on node-a (requested 1 GPU; 1 GPU free in total over 2 agents)"
	if c.Code != "capacity-fragmented" || c.Message != want || c.Slot != "cuda.shares" || c.LargestFree != "0.5" ||
		c.LargestFreeAgent != "node-a" || c.FreeTotal != "1" {
		t.Fatalf("check %+v, want %q", c, want)
	}

	x = e.pending(t, bobToken, big.ID, big.Position)
	if x.Queue == nil || x.Queue.Position != 2 || !slices.Equal(codes(x.Checks), []string{"queue-blocked"}) || x.Checks[0].SessionID != one.ID {
		t.Fatalf("second in the fifo queue: %+v", x)
	}

	ids, items := e.queueOf(t, adminToken, "", big.Position)
	if !slices.Equal(ids, []string{one.ID, big.ID}) || items[0].Position != 1 || items[1].Position != 2 ||
		!slices.Equal(codes(items[0].Checks), []string{"capacity-fragmented"}) {
		t.Fatalf("queue %+v", items)
	}
	// A page of one, then the next from its cursor.
	r := e.do(t, "GET", "/v1/scheduler/queue?limit=1", adminToken, "")
	var page struct {
		Items      []explanationItem `json:"items"`
		NextCursor *string           `json:"next_cursor"`
	}
	r.decode(t, &page)
	if len(page.Items) != 1 || page.Items[0].SessionID != one.ID || page.NextCursor == nil {
		t.Fatalf("first page %s", r.body)
	}
	if ids, _ := e.queueOf(t, adminToken, "limit=1&cursor="+*page.NextCursor, 0); !slices.Equal(ids, []string{big.ID}) {
		t.Fatalf("second page %v", ids)
	}
	for _, bad := range []string{"limit=0", "limit=501", "cursor=x", "cursor=0"} {
		r := e.do(t, "GET", "/v1/scheduler/queue?"+bad, adminToken, "")
		if p := r.problem(t); r.status != http.StatusBadRequest || p.Field != strings.Split(bad, "=")[0] {
			t.Fatalf("%s: %d %s", bad, r.status, r.body)
		}
	}

	// A session that left the queue has nothing to explain, and the one
	// behind it moves up and is tried.
	pos := e.delete(t, bobToken, one.ID, 0, http.StatusAccepted).Position
	if x := e.pending(t, bobToken, one.ID, pos); x.Pending || x.Status != "CANCELLED" || len(x.Checks) != 0 || x.Queue != nil {
		t.Fatalf("cancelled session: %+v", x)
	}
	if x := e.pending(t, bobToken, big.ID, pos); x.Queue == nil || x.Queue.Position != 1 || !slices.Equal(codes(x.Checks), []string{"capacity-insufficient"}) {
		t.Fatalf("the next session: %+v", x)
	}
}

// TestExplainLIFO: under lifo the newest goes first and nothing blocks,
// so both waiting sessions are explained by capacity: the newer (1.5
// GPU) as not enough in the whole cluster, the older as fragmented.
func TestExplainLIFO(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{queue: placement.ResourceGroup{Order: placement.OrderLIFO}})
	fragmented(t, e)
	one := e.create(t, bobToken, `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g","cuda.shares":"1"}}`)
	big := e.create(t, bobToken, `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g","cuda.shares":"1.5"}}`)

	ids, items := e.queueOf(t, adminToken, "", big.Position)
	if !slices.Equal(ids, []string{big.ID, one.ID}) || items[0].Position != 1 || items[1].Position != 2 {
		t.Fatalf("lifo queue %+v", items)
	}
	if !slices.Equal(codes(items[1].Checks), []string{"capacity-fragmented"}) {
		t.Fatalf("older session %+v", items[1].Checks)
	}
	x := e.pending(t, bobToken, big.ID, big.Position)
	want := "not enough in the whole cluster: 1 GPU free in total, requested 1.5 GPU"
	if x.Queue == nil || x.Queue.Order != "lifo" || x.Queue.Position != 1 || len(x.Checks) != 1 ||
		x.Checks[0].Code != "capacity-insufficient" || x.Checks[0].Message != want {
		t.Fatalf("newer session %+v, want %q", x, want)
	}
}

// TestExplainProjectQuota: a project limited to 4 GPUs that holds 4
// explains a request for one more with the project's use against its
// limit, besides the capacity the cluster lacks.
func TestExplainProjectQuota(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	for _, a := range []string{"node-a", "node-b"} {
		e.registerAgent(t, a)
		e.occupy(t, a, `"cuda.device":2`, map[string]string{"GPU-0": "1", "GPU-1": "1"})
	}
	limit := domain.Slots{domain.SlotCUDADevice: domain.Units(4)}
	pos := e.run(t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.ModifyProject.Handle(ctx, testMD, commands.ModifyProject{Actor: system, Domain: "default", Name: "default",
			Changes: domain.ProjectChanges{TotalResourceSlots: &limit}})
	})
	c := e.create(t, bobToken, `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g","cuda.device":1}}`)

	x := e.pending(t, bobToken, c.ID, max(pos, c.Position))
	if x.Reason != domain.ReasonPredicateChecks || !slices.Equal(codes(x.Checks), []string{"project-quota", "capacity-insufficient"}) {
		t.Fatalf("explanation %+v", x)
	}
	q := x.Checks[0]
	want := "project quota: 4 of 4 GPUs in use (project default/default, requested 1 GPU)"
	if q.Message != want || q.Used != "4" || q.Limit != "4" || q.Slot != "cuda.device" {
		t.Fatalf("quota check %+v, want %q", q, want)
	}
	if m := x.Checks[1].Message; m != "not enough in the whole cluster: 0 GPUs free in total, requested 1 GPU" {
		t.Fatalf("capacity check %q", m)
	}
}

// TestExplainVisibility: the explanation and the timeline show what the
// session shows (another domain's caller gets 404); the queue is for
// admins, a domain admin seeing only its domain's sessions.
func TestExplainVisibility(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.registerAgent(t, "node-a")
	c := e.create(t, aliceToken, `{"image":"cr.io/pytorch:2.4","resources":{"cpu":64,"mem":"1g"}}`)
	e.wait(t, c.Position)
	for _, route := range []string{"pending", "timeline"} {
		for token, status := range map[string]int{aliceToken: 200, adminToken: 200, "dadmin": 200, "carol": 404, "oadmin": 404} {
			if r := e.do(t, "GET", "/v1/sessions/"+c.ID+"/"+route, token, ""); r.status != status {
				t.Errorf("%s as %s: %d, want %d: %s", route, token, r.status, status, r.body)
			}
		}
	}
	if ids, _ := e.queueOf(t, "dadmin", "", c.Position); !slices.Equal(ids, []string{c.ID}) {
		t.Errorf("domain admin's queue %v", ids)
	}
	if ids, _ := e.queueOf(t, "oadmin", "", c.Position); len(ids) != 0 {
		t.Errorf("other domain admin's queue %v", ids)
	}
	if ids, _ := e.queueOf(t, adminToken, "resource_group=elsewhere", c.Position); len(ids) != 0 {
		t.Errorf("queue of another resource group %v", ids)
	}
	for _, token := range []string{aliceToken, monitorToken} {
		if r := e.do(t, "GET", "/v1/scheduler/queue", token, ""); r.status != http.StatusForbidden {
			t.Errorf("queue as %s: %d", token, r.status)
		}
	}
	x := e.pending(t, aliceToken, c.ID, c.Position)
	if !slices.Equal(codes(x.Checks), []string{"capacity-exceeds-agents"}) ||
		x.Checks[0].Message != "too large: requested 64 CPUs, more than any agent has (the largest offers 8 CPUs)" {
		t.Fatalf("explanation %+v", x.Checks)
	}
	// A session that could never fit does not block the fifo queue: the
	// one behind it fits now, and its start is the next round.
	small := e.create(t, aliceToken, `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g"}}`)
	x = e.pending(t, aliceToken, small.ID, small.Position)
	if !x.PlaceableNow || x.Checks == nil || len(x.Checks) != 0 || x.EstimatedStart == nil || x.Queue == nil || x.Queue.Position != 2 {
		t.Fatalf("placeable session %+v", x)
	}
}

// timelineEntry is one entry of GET /v1/sessions/{id}/timeline.
type timelineEntry struct {
	At       string         `json:"at"`
	Position uint64         `json:"position"`
	Kind     string         `json:"kind"`
	Summary  string         `json:"summary"`
	Actor    string         `json:"actor"`
	Details  map[string]any `json:"details"`
}

func (e *env) timeline(t *testing.T, token, id, query string) ([]timelineEntry, *string) {
	t.Helper()
	r := e.do(t, "GET", "/v1/sessions/"+id+"/timeline?"+query, token, "")
	if r.status != http.StatusOK {
		t.Fatalf("timeline: %d %s", r.status, r.body)
	}
	var page struct {
		Items      []timelineEntry `json:"items"`
		NextCursor *string         `json:"next_cursor"`
	}
	r.decode(t, &page)
	return page.Items, page.NextCursor
}

// TestTimeline: a session's timeline lists, in log order, its request,
// the API's audit entries of its creation and termination (who, what,
// how it ended), the scheduler's decision and the status changes with
// their reasons; it pages with a cursor.
func TestTimeline(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{accessLog: true})
	e.registerAgent(t, "node-a")
	c := e.create(t, aliceToken, `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g"},"env":{"SECRET":"hunter2"}}`)
	e.schedule(t, c, "node-a", "")
	if _, err := e.handlers.ReportKernelStatus.Handle(context.Background(), testMD, commands.ReportKernelStatus{SessionID: uuid.MustParse(c.ID),
		KernelID: uuid.MustParse(c.KernelIDs[0]), AgentID: "node-a", Phase: domain.PhaseRunning, ContainerID: "c-1"}); err != nil {
		t.Fatal(err)
	}
	pos := e.delete(t, aliceToken, c.ID, 0, http.StatusAccepted).Position

	items, next := e.timeline(t, aliceToken, c.ID, fmt.Sprintf("wait_for_position=%d", pos))
	if next != nil {
		t.Fatalf("one page expected, next %q", *next)
	}
	var kinds, summaries []string
	for i, it := range items {
		kinds, summaries = append(kinds, it.Kind), append(summaries, it.Summary)
		if i > 0 && it.Position <= items[i-1].Position {
			t.Fatalf("not in log order: %+v", items)
		}
	}
	t.Logf("timeline:\n%s", strings.Join(summaries, "\n"))
	want := []string{"session.requested", "access.logged", "session.scheduled", "kernel.running", "session.status-changed",
		"session.terminating", "access.logged"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	alice := e.users[aliceToken].ID.String()
	for _, i := range []int{1, 6} {
		if items[i].Actor != alice || items[i].Details["outcome"] != "success" {
			t.Fatalf("audit entry %+v", items[i])
		}
	}
	if items[1].Details["action"] == items[6].Details["action"] {
		t.Fatalf("create and terminate have one action: %+v", items)
	}
	if items[2].Summary != "scheduled on node-a" || items[4].Details["status"] != "RUNNING" ||
		items[5].Details["status"] != "TERMINATING" || items[5].Details["reason"] != "user-requested" {
		t.Fatalf("timeline %+v", items)
	}
	for _, it := range items {
		if strings.Contains(fmt.Sprint(it), "hunter2") {
			t.Fatalf("the environment leaked: %+v", it)
		}
	}

	page, next := e.timeline(t, aliceToken, c.ID, "limit=3")
	if len(page) != 3 || next == nil || page[2].Kind != "session.scheduled" {
		t.Fatalf("first page %+v", page)
	}
	rest, last := e.timeline(t, aliceToken, c.ID, "limit=10&cursor="+*next)
	if len(rest) != 4 || last != nil || rest[0].Kind != "kernel.running" {
		t.Fatalf("second page %+v", rest)
	}
	for _, bad := range []string{"limit=0", "cursor=-1", "cursor=x"} {
		r := e.do(t, "GET", "/v1/sessions/"+c.ID+"/timeline?"+bad, aliceToken, "")
		if p := r.problem(t); r.status != http.StatusBadRequest || p.Field != strings.Split(bad, "=")[0] {
			t.Fatalf("%s: %d %s", bad, r.status, r.body)
		}
	}
}

// TestTimelineShowsStartupDetails: an image pull's progress and an app
// getting ready are entries of the session's timeline, in words.
func TestTimelineShowsStartupDetails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.registerAgent(t, "node-a")
	c := e.create(t, aliceToken, `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g"}}`)
	e.schedule(t, c, "node-a", "")
	kernel := uuid.MustParse(c.KernelIDs[0])
	ports := []domain.PublishedPort{{Name: "web", Protocol: "http", ContainerPort: 8080, HostPort: 30000}}
	var pos uint64
	for _, r := range []commands.ReportKernelStatus{
		{Phase: domain.PhasePulling},
		{Phase: domain.PhasePulling, Pull: &domain.PullProgress{LayersDone: 1, LayersTotal: 2, BytesDone: 50, BytesTotal: 200}},
		{Phase: domain.PhaseRunning, ContainerID: "c-1", ServicePorts: ports},
		{Phase: domain.PhaseRunning, ContainerID: "c-1", ServicePorts: ports, ReadyApps: []string{"web"}},
	} {
		r.SessionID, r.KernelID, r.AgentID = uuid.MustParse(c.ID), kernel, "node-a"
		res, err := e.handlers.ReportKernelStatus.Handle(context.Background(), testMD, r)
		if err != nil {
			t.Fatal(err)
		}
		pos = res.Position
	}
	items, _ := e.timeline(t, aliceToken, c.ID, fmt.Sprintf("wait_for_position=%d", pos))
	var summaries []string
	for _, it := range items {
		summaries = append(summaries, it.Summary)
	}
	all := strings.Join(summaries, "\n")
	for _, want := range []string{"kernel " + kernel.String() + " pulled 25% of its image (1 of 2 layers)", "kernel " + kernel.String() + " apps ready: web"} {
		if !strings.Contains(all, want) {
			t.Errorf("timeline lacks %q:\n%s", want, all)
		}
	}
}

// TestMyQuotas: a caller's use against each level of limits, as the
// admission check counts it: a pending session counts at every level, the
// project's limit is the project's, and a project the caller is not in is
// not found.
func TestMyQuotas(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	limit := domain.Slots{domain.SlotCPU: domain.Units(8)}
	pos := e.run(t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.ModifyProject.Handle(ctx, testMD, commands.ModifyProject{Actor: system, Domain: "default", Name: "default",
			Changes: domain.ProjectChanges{TotalResourceSlots: &limit}})
	})
	c := e.create(t, bobToken, `{"image":"cr.io/pytorch:2.4","resources":{"cpu":2,"mem":"1g"}}`)
	r := e.do(t, "GET", fmt.Sprintf("/v1/quotas/mine?wait_for_position=%d", max(pos, c.Position)), bobToken, "")
	var out struct {
		Project string `json:"project"`
		Levels  []struct {
			Scope        string            `json:"scope"`
			Subject      string            `json:"subject"`
			Limits       map[string]string `json:"limits"`
			Pending      int               `json:"pending_sessions"`
			PendingSlots map[string]string `json:"pending_slots"`
		} `json:"levels"`
	}
	r.decode(t, &out)
	if r.status != http.StatusOK || out.Project != "default" || len(out.Levels) != 4 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var scopes []string
	for _, l := range out.Levels {
		scopes = append(scopes, l.Scope)
		if l.Pending != 1 || l.PendingSlots["cpu"] != "2" {
			t.Errorf("%s level: pending %d %v, want the one session of 2 CPUs", l.Scope, l.Pending, l.PendingSlots)
		}
	}
	if !slices.Equal(scopes, []string{"keypair", "user", "project", "domain"}) {
		t.Fatalf("levels %v", scopes)
	}
	if p := out.Levels[2]; p.Subject != "default/default" || p.Limits["cpu"] != "8" {
		t.Fatalf("project level %+v", p)
	}
	if r := e.do(t, "GET", "/v1/quotas/mine?project=elsewhere", bobToken, ""); r.status != http.StatusNotFound {
		t.Fatalf("another project: %d %s", r.status, r.body)
	}
}
