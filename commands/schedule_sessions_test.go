package commands_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// TestScheduleSessions: a round's placements are written with one append
// per agent; a placement that no longer fits is refused without touching
// the others, and a multi-node session refused on one agent gets its
// allocation on the other released.
func TestScheduleSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	e.registerAgent(t, agentSpec("a2", 8))
	a := e.requestSession(t, sessionSpec("0.6"))
	b := e.requestSession(t, sessionSpec("0.6"))
	c := e.requestSession(t, sessionSpec("0.5"))
	spread := sessionSpec("0.3")
	spread.ClusterSize, spread.ClusterMode = 2, domain.ClusterMultiNode
	d := e.requestSession(t, spread)

	place := func(r commands.RequestSessionResult, agent, device, amount string) commands.SessionPlacement {
		return commands.SessionPlacement{SessionID: r.SessionID, Kernels: placeOn(agent, r.KernelIDs, device, amount)}
	}
	dPlace := commands.SessionPlacement{SessionID: d.SessionID, Kernels: []domain.KernelPlacement{
		{KernelID: d.KernelIDs[0], AgentID: "a2", Devices: []domain.DeviceShare{{DeviceID: "GPU-1", Amount: q("0.3")}}},
		// With a's 0.6 on a1's GPU-0, 0.3 still fits; b's 0.6 then does not.
		{KernelID: d.KernelIDs[1], AgentID: "a1", Devices: []domain.DeviceShare{{DeviceID: "GPU-0", Amount: q("0.3")}}},
	}}
	before := e.lastPosition(t, domain.AgentStream("a1").String())
	res, err := e.handlers.ScheduleSessions.Handle(ctx, e.md, commands.ScheduleSessions{Placements: []commands.SessionPlacement{
		place(a, "a1", "GPU-0", "0.6"),
		place(b, "a1", "GPU-0", "0.6"), // the stale view's decision: GPU-0 has 0.4 left after a
		place(c, "a2", "GPU-0", "0.5"),
		dPlace,
	}})
	if err != nil {
		t.Fatal(err)
	}
	scheduled := slices.Clone(res.Scheduled)
	want := []uuid.UUID{a.SessionID, c.SessionID, d.SessionID}
	slices.SortFunc(scheduled, func(x, y uuid.UUID) int { return slices.Compare(x[:], y[:]) })
	slices.SortFunc(want, func(x, y uuid.UUID) int { return slices.Compare(x[:], y[:]) })
	if !slices.Equal(scheduled, want) || len(res.Refused) != 1 || res.Refused[b.SessionID] == nil {
		t.Fatalf("scheduled %v, refused %v", res.Scheduled, res.Refused)
	}
	for _, id := range want {
		if s := e.session(t, id); s.Status() != domain.StatusScheduled {
			t.Errorf("session %s is %s", id, s.Status())
		}
	}
	if s := e.session(t, b.SessionID); s.Status() != domain.StatusPending {
		t.Errorf("refused session is %s", s.Status())
	}
	// One append on a1 for a and d's second kernel.
	var appended []string
	for _, ev := range e.read(t, domain.AgentStream("a1").String()) {
		if ev.Position > before {
			appended = append(appended, ev.Type)
		}
	}
	if !slices.Equal(appended, []string{domain.TypeAgentAllocated, domain.TypeAgentAllocated}) {
		t.Fatalf("a1 got %v", appended)
	}
	if got := e.agent(t, "a1").DeviceFree("GPU-0"); got != q("0.1") {
		t.Fatalf("a1 GPU-0 free %v, want 0.1", got)
	}
	if res.Position < e.lastPosition(t, domain.SessionStream(d.SessionID).String()) {
		t.Fatalf("position %d is before the last write", res.Position)
	}

	// Again: already scheduled ones succeed without writing.
	again, err := e.handlers.ScheduleSessions.Handle(ctx, e.md, commands.ScheduleSessions{Placements: []commands.SessionPlacement{place(a, "a1", "GPU-0", "0.6")}})
	if err != nil || len(again.Scheduled) != 1 || len(again.Refused) != 0 {
		t.Fatalf("again: %+v %v", again, err)
	}
}

// TestScheduleSessionsReleasesAPartialMultiNodePlacement: a multi-node
// session that fits on one agent but not the other holds nothing after.
func TestScheduleSessionsReleasesAPartialMultiNodePlacement(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	e.registerAgent(t, agentSpec("a2", 8))
	spread := sessionSpec("0.7")
	spread.ClusterSize, spread.ClusterMode = 2, domain.ClusterMultiNode
	d := e.requestSession(t, spread)
	hog := e.requestSession(t, sessionSpec("0.5"))
	res, err := e.handlers.ScheduleSessions.Handle(ctx, e.md, commands.ScheduleSessions{Placements: []commands.SessionPlacement{
		{SessionID: hog.SessionID, Kernels: placeOn("a2", hog.KernelIDs, "GPU-0", "0.5")},
		{SessionID: d.SessionID, Kernels: []domain.KernelPlacement{
			{KernelID: d.KernelIDs[0], AgentID: "a1", Devices: []domain.DeviceShare{{DeviceID: "GPU-0", Amount: q("0.7")}}},
			{KernelID: d.KernelIDs[1], AgentID: "a2", Devices: []domain.DeviceShare{{DeviceID: "GPU-0", Amount: q("0.7")}}},
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scheduled) != 1 || res.Refused[d.SessionID] == nil {
		t.Fatalf("scheduled %v refused %v", res.Scheduled, res.Refused)
	}
	if a1 := e.agent(t, "a1"); len(a1.Allocations()) != 0 || a1.DeviceFree("GPU-0") != q("1") {
		t.Fatalf("a1 keeps %+v", a1.Allocations())
	}
}

// TestScheduleSessionsKnown: with the session as the scheduler folded it,
// the placement is written expecting that revision (the same event as the
// reading path writes); when the session moved meanwhile (cancelled), the
// write is refused and the allocation given back.
func TestScheduleSessionsKnown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	spec := sessionSpec("0.5")
	spec.ClusterSize = 2
	ok := e.requestSession(t, spec)
	gone := e.requestSession(t, sessionSpec("0.5"))
	known := func(r commands.RequestSessionResult) *commands.KnownSession {
		s := e.session(t, r.SessionID)
		k := &commands.KnownSession{Revision: int64(len(e.read(t, domain.SessionStream(r.SessionID).String())) - 1)}
		for _, kern := range s.Kernels() {
			k.Kernels = append(k.Kernels, commands.KnownKernel{ID: kern.ID(), Slots: kern.Requested()})
		}
		return k
	}
	kOK, kGone := known(ok), known(gone)
	if _, err := e.handlers.CancelPendingSession.Handle(ctx, e.md, commands.CancelPendingSession{SessionID: gone.SessionID, Reason: domain.ReasonUserRequested}); err != nil {
		t.Fatal(err)
	}
	// Kernels listed in reverse: the event records them in kernel order.
	okKernels := placeOn("a1", ok.KernelIDs, "GPU-0", "0.5")
	slices.Reverse(okKernels)
	res, err := e.handlers.ScheduleSessions.Handle(ctx, e.md, commands.ScheduleSessions{Placements: []commands.SessionPlacement{
		{SessionID: ok.SessionID, Kernels: okKernels, Known: kOK},
		{SessionID: gone.SessionID, Kernels: placeOn("a1", gone.KernelIDs, "GPU-1", "0.5"), Known: kGone},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scheduled) != 1 || res.Scheduled[0] != ok.SessionID || !errors.Is(res.Refused[gone.SessionID], domain.ErrConflict) {
		t.Fatalf("scheduled %v refused %v", res.Scheduled, res.Refused)
	}
	s := e.session(t, ok.SessionID)
	if s.Status() != domain.StatusScheduled || !s.HasPlacement(placeOn("a1", ok.KernelIDs, "GPU-0", "0.5")) {
		t.Fatalf("session %s", s.Status())
	}
	if a := e.agent(t, "a1"); len(a.Allocations()) != 2 || a.DeviceFree("GPU-1") != q("1") {
		t.Fatalf("allocations %+v", a.Allocations())
	}
}

// TestScheduleSessionsKnownAgents: with the agents as the scheduler
// folded them, a current one is decided on without reading its stream; a
// stale one (another writer allocated on it since) has its append refused
// and is decided again on its stream: the placement that no longer fits is
// refused, nothing is oversubscribed.
func TestScheduleSessionsKnownAgents(t *testing.T) {
	t.Parallel()
	e, hs := hooked(t)
	e.registerAgent(t, agentSpec("a1", 8))
	e.registerAgent(t, agentSpec("a2", 8))
	stale, current := e.agent(t, "a1"), e.agent(t, "a2")
	early := e.requestSession(t, sessionSpec("0.6"))
	if _, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: early.SessionID, Kernels: placeOn("a1", early.KernelIDs, "GPU-0", "0.6")}); err != nil {
		t.Fatal(err)
	}
	late, other := e.requestSession(t, sessionSpec("0.6")), e.requestSession(t, sessionSpec("0.6"))

	var mu sync.Mutex
	reads := map[string]int{}
	hs.set(func(h *hookStore) {
		h.beforeRead = func(stream string) error {
			mu.Lock()
			defer mu.Unlock()
			reads[stream]++
			return nil
		}
	})
	res, err := e.handlers.ScheduleSessions.Handle(ctx, e.md, commands.ScheduleSessions{
		Placements: []commands.SessionPlacement{
			{SessionID: late.SessionID, Kernels: placeOn("a1", late.KernelIDs, "GPU-0", "0.6")},
			{SessionID: other.SessionID, Kernels: placeOn("a2", other.KernelIDs, "GPU-0", "0.6")},
		},
		Agents: map[string]*domain.Agent{"a1": stale, "a2": current},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scheduled) != 1 || res.Scheduled[0] != other.SessionID || domain.KindOf(res.Refused[late.SessionID]) != domain.KindQuotaExceeded {
		t.Fatalf("scheduled %v refused %v", res.Scheduled, res.Refused)
	}
	if reads[domain.AgentStream("a2").String()] != 0 || reads[domain.AgentStream("a1").String()] != 1 {
		t.Fatalf("agent reads %v: want none of a2, a1 once (after its append was refused)", reads)
	}
	if a1 := e.agent(t, "a1"); len(a1.Allocations()) != 1 || a1.DeviceFree("GPU-0") != q("0.4") {
		t.Fatalf("a1 allocations %+v", a1.Allocations())
	}
	if s := e.session(t, late.SessionID); s.Status() != domain.StatusPending {
		t.Fatalf("refused session is %s", s.Status())
	}
}

// TestScheduleSessionsRedecidesAConflictedAgent: another writer shrinks an
// agent between the batch's load and its write; the agent is decided again
// on its fresh state (the session that no longer fits is refused, its
// allocation elsewhere released) while the other agents' allocations and
// sessions are written.
func TestScheduleSessionsRedecidesAConflictedAgent(t *testing.T) {
	t.Parallel()
	e, hs := hooked(t)
	e.registerAgent(t, agentSpec("a1", 8))
	e.registerAgent(t, agentSpec("a2", 8))
	big := sessionSpec("")
	big.Resources[domain.SlotCPU] = domain.Units(6)
	spread := big
	spread.ClusterSize, spread.ClusterMode = 2, domain.ClusterMultiNode
	small := e.requestSession(t, sessionSpec(""))
	wide := e.requestSession(t, spread)
	other := e.requestSession(t, sessionSpec(""))

	// a1 shrinks to 4 cpus: small (1) still fits there, wide's kernel (6) no longer.
	hs.set(func(h *hookStore) { h.beforeAppend = racer(t, e.store, "a1", 4, 1) })
	before := hs.appendsTo(domain.AgentStream("a1").String())
	res, err := e.handlers.ScheduleSessions.Handle(ctx, e.md, commands.ScheduleSessions{Placements: []commands.SessionPlacement{
		{SessionID: small.SessionID, Kernels: placeOn("a1", small.KernelIDs, "", "")},
		{SessionID: wide.SessionID, Kernels: []domain.KernelPlacement{
			{KernelID: wide.KernelIDs[0], AgentID: "a1"}, {KernelID: wide.KernelIDs[1], AgentID: "a2"},
		}},
		{SessionID: other.SessionID, Kernels: placeOn("a2", other.KernelIDs, "", "")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scheduled) != 2 || len(res.Refused) != 1 || domain.KindOf(res.Refused[wide.SessionID]) != domain.KindQuotaExceeded {
		t.Fatalf("scheduled %v refused %v", res.Scheduled, res.Refused)
	}
	if n := hs.appendsTo(domain.AgentStream("a1").String()) - before; n != 2 {
		t.Fatalf("%d writes to a1, want 2 (refused, then re-decided)", n)
	}
	if a1 := e.agent(t, "a1"); a1.Occupied()[domain.SlotCPU] != domain.Units(1) {
		t.Fatalf("a1 occupied %v", a1.Occupied())
	}
	if a2 := e.agent(t, "a2"); a2.Occupied()[domain.SlotCPU] != domain.Units(1) || len(a2.Allocations()) != 1 {
		t.Fatalf("a2 keeps %v (wide's kernel must be released)", a2.Allocations())
	}
	for id, want := range map[uuid.UUID]domain.SessionStatus{small.SessionID: domain.StatusScheduled, other.SessionID: domain.StatusScheduled, wide.SessionID: domain.StatusPending} {
		if got := e.session(t, id).Status(); got != want {
			t.Errorf("session %s is %s, want %s", id, got, want)
		}
	}
}

// TestScheduleSessionsUncertainWrite: the sessions' write fails in a way
// that may have written it (here it did not): every session of it is
// refused and its allocations released, so nothing stays allocated for a
// session still PENDING.
func TestScheduleSessionsUncertainWrite(t *testing.T) {
	t.Parallel()
	e, hs := hooked(t)
	e.registerAgent(t, agentSpec("a1", 8))
	a, b := e.requestSession(t, sessionSpec("0.5")), e.requestSession(t, sessionSpec("0.5"))
	hs.set(func(h *hookStore) {
		h.beforeAppend = func(stream string) error {
			if isSession(stream) {
				return errDiskOnFire
			}
			return nil
		}
	})
	res, err := e.handlers.ScheduleSessions.Handle(ctx, e.md, commands.ScheduleSessions{Placements: []commands.SessionPlacement{
		{SessionID: a.SessionID, Kernels: placeOn("a1", a.KernelIDs, "GPU-0", "0.5")},
		{SessionID: b.SessionID, Kernels: placeOn("a1", b.KernelIDs, "GPU-1", "0.5")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scheduled) != 0 || !errors.Is(res.Refused[a.SessionID], errDiskOnFire) || !errors.Is(res.Refused[b.SessionID], errDiskOnFire) {
		t.Fatalf("scheduled %v refused %v", res.Scheduled, res.Refused)
	}
	if a1 := e.agent(t, "a1"); len(a1.Allocations()) != 0 {
		t.Fatalf("a1 keeps %v", a1.Allocations())
	}
}

// TestScheduleSessionsLostAnswerKeepsAllocation: a round's
// session.scheduled landed but the answer was lost; the applier reads the
// sessions back, sees them scheduled with their placement, and keeps
// their allocations (as ScheduleSession does: one applier).
func TestScheduleSessionsLostAnswerKeepsAllocation(t *testing.T) {
	t.Parallel()
	e, hs := hooked(t)
	e.registerAgent(t, agentSpec("a1", 8))
	a, b := e.requestSession(t, sessionSpec("0.5")), e.requestSession(t, sessionSpec("0.5"))
	hs.set(func(h *hookStore) {
		h.afterAppend = func(stream string, err error) error {
			if isSession(stream) && err == nil {
				return errDiskOnFire
			}
			return err
		}
	})
	res, err := e.handlers.ScheduleSessions.Handle(ctx, e.md, commands.ScheduleSessions{Placements: []commands.SessionPlacement{
		{SessionID: a.SessionID, Kernels: placeOn("a1", a.KernelIDs, "GPU-0", "0.5")},
		{SessionID: b.SessionID, Kernels: placeOn("a1", b.KernelIDs, "GPU-1", "0.5")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scheduled) != 2 || len(res.Refused) != 0 {
		t.Fatalf("scheduled %v refused %v", res.Scheduled, res.Refused)
	}
	for _, id := range []uuid.UUID{a.SessionID, b.SessionID} {
		if s := e.session(t, id); s.Status() != domain.StatusScheduled {
			t.Fatalf("session %s is %s", id, s.Status())
		}
	}
	if a1 := e.agent(t, "a1"); len(a1.Allocations()) != 2 {
		t.Fatalf("a1 keeps %v, want both allocations", a1.Allocations())
	}
}
