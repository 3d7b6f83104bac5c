package commands_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/google/uuid"
)

// racer returns a beforeAppend hook that, before our append to the agent
// stream, lets another writer re-register the agent with cpus (through the
// real store), so our append meets a real revision conflict. It
// interferes that many times (-1: always).
func racer(t *testing.T, store eventstore.Store, agentID string, cpus int64, times int) func(string) error {
	return func(stream string) error {
		if stream != domain.AgentStream(agentID).String() || times == 0 {
			return nil
		}
		times--
		spec := agentSpec(agentID, cpus)
		data, err := json.Marshal(domain.AgentRegistered{AgentID: agentID, Architecture: spec.Architecture, Capacity: spec.Capacity, Devices: spec.Devices, At: t0})
		if err != nil {
			t.Error(err)
		}
		_, err = store.Append(context.Background(), stream, eventstore.Any, eventstore.EventData{
			ID: eventstore.NewEventID(), Type: domain.TypeAgentRegistered, Version: 1, Data: data,
		})
		if err != nil {
			t.Error(err)
		}
		return nil
	}
}

func TestRetriesAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	hs := &hookStore{EventStore: e.store}
	h, err := commands.NewHandlers(hs, stepClock(), commands.Options{MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	hs.set(func(h *hookStore) { h.beforeAppend = racer(t, e.store, "a1", 4, -1) })

	_, err = h.RegisterAgent.Handle(ctx, e.md, commands.RegisterAgent{Spec: agentSpec("a1", 16)})
	wantKind(t, err, domain.KindConflict)
	if !errors.Is(err, eventstore.ErrWrongExpectedRevision) {
		t.Fatalf("err %v does not wrap the store's conflict", err)
	}
	if n := hs.appendsTo(domain.AgentStream("a1").String()); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
}

// TestRetryDecidesOnFreshState: another writer changes the agent between
// our load and our append; the retry loads again and decides on what the
// agent has now.
func TestRetryDecidesOnFreshState(t *testing.T) {
	t.Parallel()
	e, hs := hooked(t)
	e.registerAgent(t, agentSpec("a1", 8))
	spec := sessionSpec("")
	spec.Resources[domain.SlotCPU] = domain.Units(6)
	first, second := e.requestSession(t, spec), e.requestSession(t, spec)

	// The agent grows to 16 meanwhile: the retry fits.
	hs.set(func(h *hookStore) { h.beforeAppend = racer(t, e.store, "a1", 16, 1) })
	before := hs.appendsTo(domain.AgentStream("a1").String())
	if _, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: first.SessionID, Kernels: placeOn("a1", first.KernelIDs, "", "")}); err != nil {
		t.Fatal(err)
	}
	if n := hs.appendsTo(domain.AgentStream("a1").String()) - before; n != 2 {
		t.Fatalf("%d appends to the agent, want 2 (a conflict, then the retry)", n)
	}
	if a := e.agent(t, "a1"); a.Capacity()[domain.SlotCPU] != domain.Units(16) || a.Occupied()[domain.SlotCPU] != domain.Units(6) {
		t.Fatalf("capacity %v occupied %v", a.Capacity(), a.Occupied())
	}

	// The agent shrinks back to 8 meanwhile: 6 more no longer fit.
	hs.set(func(h *hookStore) { h.beforeAppend = racer(t, e.store, "a1", 8, 1) })
	_, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: second.SessionID, Kernels: placeOn("a1", second.KernelIDs, "", "")})
	wantKind(t, err, domain.KindQuotaExceeded)
	if a := e.agent(t, "a1"); a.Occupied()[domain.SlotCPU] != domain.Units(6) || e.session(t, second.SessionID).Status() != domain.StatusPending {
		t.Fatalf("occupied %v", a.Occupied())
	}
}

func TestMetadataIsStoredOnEveryEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	res := e.requestSession(t, sessionSpec("0.5"))
	md := commands.Metadata{Actor: "scheduler", RequestID: "round-7", CausationID: "evt-42"}
	if _, err := e.handlers.ScheduleSession.Handle(ctx, md, commands.ScheduleSession{SessionID: res.SessionID, Kernels: placeOn("a1", res.KernelIDs, "GPU-0", "0.5")}); err != nil {
		t.Fatal(err)
	}
	for _, stream := range []string{domain.AgentStream("a1").String(), domain.SessionStream(res.SessionID).String()} {
		evs := e.read(t, stream)
		last := evs[len(evs)-1]
		if last.Metadata != md.Stored() || last.Version != domain.SchemaVersion || last.ID.Version() != 7 {
			t.Fatalf("%s: %+v", stream, last)
		}
	}
}

func TestStoreErrorsAreDomainErrors(t *testing.T) {
	t.Parallel()
	t.Run("closed store", func(t *testing.T) {
		store := openStore(t)
		h, err := commands.NewHandlers(store, stepClock(), commands.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Close(); err != nil {
			t.Fatal(err)
		}
		_, err = h.RegisterAgent.Handle(ctx, commands.Metadata{}, commands.RegisterAgent{Spec: agentSpec("a1", 8)})
		wantKind(t, err, domain.KindUnavailable)
		if !errors.Is(err, eventstore.ErrClosed) {
			t.Fatalf("err %v does not wrap ErrClosed", err)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		e := newEnv(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := e.handlers.RegisterAgent.Handle(cctx, e.md, commands.RegisterAgent{Spec: agentSpec("a1", 8)})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v does not wrap context.Canceled", err)
		}
		wantKind(t, err, domain.KindUnavailable)
	})
	t.Run("a stream that is not a session", func(t *testing.T) {
		e := newEnv(t)
		id := uuid.New()
		if _, err := e.store.Append(ctx, domain.SessionStream(id).String(), eventstore.NoStream, eventstore.EventData{
			ID: eventstore.NewEventID(), Type: "session.exploded", Version: 1, Data: json.RawMessage(`{}`),
		}); err != nil {
			t.Fatal(err)
		}
		_, err := e.handlers.TerminateSession.Handle(ctx, e.md, commands.TerminateSession{SessionID: id})
		wantKind(t, err, domain.KindInternal)
	})
}
