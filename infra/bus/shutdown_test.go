package bus_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/bustest"
	"github.com/cairnhq/cairn/infra/bus/natsembed"
)

func TestStoppingHandsBackInFlightMessages(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	srv := startServer(t, log)
	cfg := testConfig(srv.ClientURL())
	// Far longer than the test may take: what comes back must have been
	// handed back, not timed out.
	cfg.AckWait = 2 * waitTimeout
	b := connectBus(t, cfg, log)
	topic := agentTopic(t, "s")

	var evs []eventstore.RecordedEvent
	for i := range 5 {
		evs = append(evs, event("agent-s", uint64(i+1), `{}`))
	}
	publishEvents(t, b, topic, evs...)

	// The first handler call blocks until Handle stops; by then the other
	// messages are prefetched.
	started := make(chan struct{})
	stop := handling(t, b, topic, "agent-s", func(ctx context.Context, m *message.Message) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	})
	<-started
	stop()

	got := make(chan delivery, 10)
	handling(t, b, topic, "agent-s", recorder(got))
	ds := receive(t, got, len(evs))
	sortByPosition(ds)
	assertIDs(t, ds, evs)
	if ds[0].attempt != 2 {
		t.Errorf("the interrupted message came back as attempt %d, want 2", ds[0].attempt)
	}
}

func TestCloseStopsHandlersAndLeaksNoGoroutines(t *testing.T) {
	// Not parallel: it counts goroutines.
	cycle := func() {
		log := testLog(t)
		srv, err := natsembed.Start(t.Context(), natsembed.Options{StoreDir: t.TempDir(), Logger: log, Insecure: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := bus.Connect(t.Context(), testConfig(srv.ClientURL()), log)
		if err != nil {
			t.Fatal(err)
		}
		topic := agentTopic(t, "z")
		got := make(chan delivery, 10)
		done := make(chan error, 1)
		// A context that never ends: Close must stop it.
		go func() { done <- b.Handle(context.Background(), topic, "agent-z", recorder(got)) }()
		publishEvents(t, b, topic, event("agent-z", 1, `1`), event("agent-z", 2, `2`))
		receive(t, got, 2)

		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Handle after Close: %v", err)
			}
		case <-time.After(waitTimeout):
			t.Fatal("Handle still running after Close returned")
		}
		m := message.NewMessage(uuid.NewString(), []byte(`{}`))
		if err := b.Publish(t.Context(), topic, m); !errors.Is(err, bus.ErrClosed) || !errors.Is(err, domain.ErrUnavailable) {
			t.Errorf("Publish after Close: %v, want ErrClosed (unavailable)", err)
		}
		if err := b.Handle(t.Context(), topic, "agent-z", recorder(got)); !errors.Is(err, bus.ErrClosed) {
			t.Errorf("Handle after Close: %v, want ErrClosed", err)
		}
		if err := b.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		srv.Shutdown()
		srv.Shutdown()
	}

	cycle() // starts what packages start once and keep
	if t.Failed() {
		return
	}
	base := runtime.NumGoroutine()
	cycle()

	defer func() {
		if t.Failed() {
			var stacks bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
			t.Logf("%d goroutines after a start/stop cycle, %d before:\n%s", runtime.NumGoroutine(), base, stacks.String())
		}
	}()
	// Goroutines end on their own schedule after Close: no event announces it.
	await.Until(t, waitTimeout, "the goroutines of a start/stop cycle to end", func() bool { return runtime.NumGoroutine() <= base })
}

// An agent's Handle waits for the consumer the manager creates when the
// agent registers, and stops waiting when its context ends.
func TestAgentHandleWaitsForItsConsumer(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	srv := bustest.Start(t, log)
	managerCfg := testConfig(srv.ClientURL())
	managerCfg.CredentialsFile = srv.ManagerCredentials(t)
	manager := connectBus(t, managerCfg, log)
	const waiting = "waiting for the manager to create this agent's consumer (it does when the agent registers)"
	agentCfg := func(id string) bus.Config {
		cfg := testConfig(srv.ClientURL())
		cfg.AgentID = id
		cfg.CredentialsFile, _ = srv.AgentCredentials(t, id)
		return cfg
	}

	t.Run("until the manager creates it", func(t *testing.T) {
		t.Parallel()
		agentLog, waits := signalOn(log, waiting)
		agent := connectBus(t, agentCfg("late"), agentLog)
		topic := agentTopic(t, "late")
		got := make(chan delivery, 1)
		handling(t, agent, topic, bus.AgentDurable("late"), recorder(got))
		<-waits
		// Published and created after the agent started waiting.
		ev := event("agent-late", 1, `{}`)
		publishEvents(t, manager, topic, ev)
		if err := manager.EnsureAgentConsumer(t.Context(), "late"); err != nil {
			t.Fatal(err)
		}
		assertIDs(t, receive(t, got, 1), []eventstore.RecordedEvent{ev})
	})

	t.Run("until its context ends", func(t *testing.T) {
		t.Parallel()
		cfg := agentCfg("never")
		// Looking again would take an hour: Handle returns in time only
		// because its context ends the wait.
		cfg.RetryMin, cfg.RetryMax = time.Hour, time.Hour
		agentLog, waits := signalOn(log, waiting)
		agent := connectBus(t, cfg, agentLog)
		stop := handling(t, agent, agentTopic(t, "never"), bus.AgentDurable("never"), func(context.Context, *message.Message) error {
			t.Error("a message without a consumer")
			return nil
		})
		<-waits
		stop() // fails the test if Handle does not return
	})
}
