package commands_test

import (
	"errors"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

var errDiskOnFire = errors.New("disk on fire")

// hooked is an env whose handlers write through a hookStore.
func hooked(t *testing.T) (*env, *hookStore) {
	t.Helper()
	e := newEnv(t)
	hs := &hookStore{EventStore: e.store}
	h, err := commands.NewHandlers(hs, stepClock(), commands.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &env{store: e.store, handlers: h, md: e.md}, hs
}

func TestScheduleSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	spec := sessionSpec("0.5")
	spec.ClusterSize = 2
	res := e.requestSession(t, spec)
	placements := []domain.KernelPlacement{
		{KernelID: res.KernelIDs[0], AgentID: "a1", Devices: []domain.DeviceShare{{DeviceID: "GPU-0", Amount: q("0.5")}}},
		{KernelID: res.KernelIDs[1], AgentID: "a1", Devices: []domain.DeviceShare{{DeviceID: "GPU-1", Amount: q("0.5")}}},
	}
	out, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: res.SessionID, Kernels: placements})
	if err != nil {
		t.Fatal(err)
	}
	s := e.session(t, res.SessionID)
	if s.Status() != domain.StatusScheduled || out.Position != e.lastPosition(t, domain.SessionStream(res.SessionID).String()) {
		t.Fatalf("%s, position %d", s.Status(), out.Position)
	}
	// Both kernels in one append on the agent.
	a := e.agent(t, "a1")
	if len(a.Allocations()) != 2 || a.Occupied()[domain.SlotCPU] != domain.Units(2) || a.DeviceFree("GPU-0") != q("0.5") || a.DeviceFree("GPU-1") != q("0.5") {
		t.Fatalf("allocations %+v", a.Allocations())
	}
	evs := e.read(t, domain.AgentStream("a1").String())
	if len(evs) != 3 || evs[1].Position != evs[2].Position-1 {
		t.Fatalf("agent stream %v", e.types(t, domain.AgentStream("a1").String()))
	}

	// The same placement again: nothing appended anywhere.
	again, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: res.SessionID, Kernels: placements})
	if err != nil || again.Position != out.Position || len(e.read(t, domain.AgentStream("a1").String())) != 3 {
		t.Fatalf("re-scheduling: %v position %d", err, again.Position)
	}

	// A different placement for a scheduled session is a conflict and
	// touches no agent.
	other := placeOn("a1", res.KernelIDs, "GPU-1", "0.5")
	other[0].Devices[0].DeviceID = "GPU-0"
	other[0].Devices[0].Amount, other[1].Devices[0].Amount = q("0.5"), q("0.5")
	other[0].Devices, other[1].Devices = other[1].Devices, other[0].Devices
	_, err = e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: res.SessionID, Kernels: other})
	wantKind(t, err, domain.KindConflict)
	if len(e.read(t, domain.AgentStream("a1").String())) != 3 {
		t.Fatal("a refused schedule touched the agent")
	}
}

func TestScheduleSessionRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	agentEvents := func() int { return len(e.read(t, domain.AgentStream("a1").String())) }

	t.Run("oversubscribed device", func(t *testing.T) {
		res := e.requestSession(t, sessionSpec("0.75"))
		e.schedule(t, res, "a1", "GPU-0", "0.75")
		next := e.requestSession(t, sessionSpec("0.5"))
		n := agentEvents()
		_, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: next.SessionID, Kernels: placeOn("a1", next.KernelIDs, "GPU-0", "0.5")})
		wantKind(t, err, domain.KindQuotaExceeded)
		var short *domain.InsufficientCapacityError
		if !errors.As(err, &short) || len(short.Devices) != 1 || short.Devices[0].DeviceID != "GPU-0" {
			t.Fatalf("err %v does not name GPU-0", err)
		}
		if e.session(t, next.SessionID).Status() != domain.StatusPending || agentEvents() != n {
			t.Fatal("a refused allocation left traces")
		}
	})
	t.Run("unknown agent", func(t *testing.T) {
		res := e.requestSession(t, sessionSpec(""))
		_, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: res.SessionID, Kernels: placeOn("a9", res.KernelIDs, "", "")})
		wantKind(t, err, domain.KindNotFound)
		if e.session(t, res.SessionID).Status() != domain.StatusPending {
			t.Fatal("scheduled on an unknown agent")
		}
	})
	t.Run("bad placement", func(t *testing.T) {
		res := e.requestSession(t, sessionSpec("0.5"))
		_, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: res.SessionID, Kernels: placeOn("a1", res.KernelIDs, "GPU-1", "0.25")})
		wantKind(t, err, domain.KindInvalid)
	})
	t.Run("unknown session", func(t *testing.T) {
		_, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: unknownID, Kernels: placeOn("a1", []uuid.UUID{unknownID}, "", "")})
		wantKind(t, err, domain.KindNotFound)
	})
}

// TestScheduleSessionCancelledMeanwhile: the session is cancelled between
// the allocation and session.scheduled; the retry sees it and the
// allocation is released.
func TestScheduleSessionCancelledMeanwhile(t *testing.T) {
	t.Parallel()
	e, hs := hooked(t)
	plain := newEnvOn(t, e)
	e.registerAgent(t, agentSpec("a1", 8))
	res := e.requestSession(t, sessionSpec("0.5"))
	var once bool
	hs.set(func(h *hookStore) {
		h.beforeAppend = func(stream string) error {
			if isSession(stream) && !once {
				once = true
				if _, err := plain.handlers.CancelPendingSession.Handle(ctx, e.md, commands.CancelPendingSession{SessionID: res.SessionID}); err != nil {
					t.Error(err)
				}
			}
			return nil
		}
	})
	_, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: res.SessionID, Kernels: placeOn("a1", res.KernelIDs, "GPU-0", "0.5")})
	wantKind(t, err, domain.KindConflict)
	if s := e.session(t, res.SessionID); s.Status() != domain.StatusCancelled {
		t.Fatalf("status %s", s.Status())
	}
	wantTypes(t, e.types(t, domain.AgentStream("a1").String()), domain.TypeAgentRegistered, domain.TypeAgentAllocated, domain.TypeAgentReleased)
	rel := decode(t, e.read(t, domain.AgentStream("a1").String()))[2].Event.(domain.AgentReleased)
	if rel.Reason != domain.ReasonScheduleAborted {
		t.Fatalf("release reason %q", rel.Reason)
	}
}

// TestScheduleSessionFailedAppendReleases: the session's append fails
// without writing; the handler reads the session back, sees it PENDING,
// and gives the allocation back.
func TestScheduleSessionFailedAppendReleases(t *testing.T) {
	t.Parallel()
	e, hs := hooked(t)
	e.registerAgent(t, agentSpec("a1", 8))
	res := e.requestSession(t, sessionSpec("0.5"))
	hs.set(func(h *hookStore) {
		h.beforeAppend = func(stream string) error {
			if isSession(stream) {
				return errDiskOnFire
			}
			return nil
		}
	})
	_, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: res.SessionID, Kernels: placeOn("a1", res.KernelIDs, "GPU-0", "0.5")})
	if !errors.Is(err, errDiskOnFire) {
		t.Fatalf("err %v", err)
	}
	wantKind(t, err, domain.KindUnavailable)
	if a := e.agent(t, "a1"); !a.Occupied().IsZero() || e.session(t, res.SessionID).Status() != domain.StatusPending {
		t.Fatalf("occupied %v", a.Occupied())
	}
}

// TestScheduleSessionLostAnswerKeepsAllocation: the session's append
// landed but its answer was lost; reading back shows the placement, so the
// command succeeds and the allocation stays.
func TestScheduleSessionLostAnswerKeepsAllocation(t *testing.T) {
	t.Parallel()
	e, hs := hooked(t)
	e.registerAgent(t, agentSpec("a1", 8))
	res := e.requestSession(t, sessionSpec("0.5"))
	hs.set(func(h *hookStore) {
		h.afterAppend = func(stream string, err error) error {
			if isSession(stream) && err == nil {
				return errDiskOnFire
			}
			return err
		}
	})
	out, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: res.SessionID, Kernels: placeOn("a1", res.KernelIDs, "GPU-0", "0.5")})
	if err != nil {
		t.Fatal(err)
	}
	if e.session(t, res.SessionID).Status() != domain.StatusScheduled || len(e.agent(t, "a1").Allocations()) != 1 ||
		out.Position != e.lastPosition(t, domain.SessionStream(res.SessionID).String()) {
		t.Fatal("the placement was not kept")
	}
}

// TestScheduleSessionCrashWindow: allocations landed, then the session's
// append and the read-back both failed (as if the process died there).
// The allocation is kept — never a SCHEDULED session without one — and
// running the same placement again completes the schedule without a
// second allocation.
func TestScheduleSessionCrashWindow(t *testing.T) {
	t.Parallel()
	e, hs := hooked(t)
	e.registerAgent(t, agentSpec("a1", 8))
	res := e.requestSession(t, sessionSpec("0.5"))
	requested := hs.appendsTo(domain.SessionStream(res.SessionID).String())
	sessionAppends := func() int { return hs.appendsTo(domain.SessionStream(res.SessionID).String()) - requested }
	hs.set(func(h *hookStore) {
		h.beforeAppend = func(stream string) error {
			if isSession(stream) {
				return errDiskOnFire
			}
			return nil
		}
		h.beforeRead = func(stream string) error {
			if isSession(stream) && sessionAppends() > 0 {
				return errDiskOnFire
			}
			return nil
		}
	})
	cmd := commands.ScheduleSession{SessionID: res.SessionID, Kernels: placeOn("a1", res.KernelIDs, "GPU-0", "0.5")}
	if _, err := e.handlers.ScheduleSession.Handle(ctx, e.md, cmd); err == nil {
		t.Fatal("succeeded")
	}
	if n, st := len(e.agent(t, "a1").Allocations()), e.session(t, res.SessionID).Status(); n != 1 || st != domain.StatusPending {
		t.Logf("%d allocations, session %s", n, st)
		t.Fatal("the crash window is not what the test means to build")
	}

	hs.set(func(h *hookStore) { h.beforeAppend, h.afterAppend, h.beforeRead = nil, nil, nil })
	if _, err := e.handlers.ScheduleSession.Handle(ctx, e.md, cmd); err != nil {
		t.Fatal(err)
	}
	if e.session(t, res.SessionID).Status() != domain.StatusScheduled {
		t.Fatal("re-running did not complete the schedule")
	}
	wantTypes(t, e.types(t, domain.AgentStream("a1").String()), domain.TypeAgentRegistered, domain.TypeAgentAllocated)
}

// newEnvOn is a second set of plain handlers over e's store.
func newEnvOn(t *testing.T, e *env) *env {
	t.Helper()
	h, err := commands.NewHandlers(e.store, stepClock(), commands.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &env{store: e.store, handlers: h, md: e.md}
}
