package projections_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
)

func TestDecodeErrorStopsTheProjector(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		ctx := context.Background()
		w := newWriter(t, b)
		w.sessions(t, "alice", 4)
		before := w.Last()
		// A session.requested whose session id is not a UUID: the type is
		// handled, so it must not be skipped.
		bad := eventstore.EventData{ID: eventstore.NewEventID(), Type: domain.TypeSessionRequested, Version: 1,
			Data: []byte(`{"session_id":"not-a-uuid"}`)}
		res, err := b.Store.Append(ctx, "session-broken", eventstore.NoStream, bad)
		if err != nil {
			t.Fatal(err)
		}
		w.sessions(t, "alice", 2)

		p, err := projections.NewProjector(b.DB, b.Store, &eventLog{}, projections.Options{Logger: projectiontest.Discard})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithTimeout(ctx, projectiontest.Timeout)
		defer cancel()
		err = p.Run(runCtx)
		var evErr *projections.EventError
		if !errors.Is(err, projections.ErrDecode) || !errors.As(err, &evErr) {
			t.Fatalf("Run = %v, want an *EventError matching ErrDecode", err)
		}
		if evErr.Position != res.Position || evErr.Type != domain.TypeSessionRequested || evErr.Stream != "session-broken" {
			t.Errorf("error names position %d %s in %s, want %d", evErr.Position, evErr.Type, evErr.Stream, res.Position)
		}
		if cp := checkpointOf(t, b.DB); cp < before || cp >= res.Position {
			t.Errorf("checkpoint = %d, want the events before the bad one (%d..%d)", cp, before, res.Position-1)
		}
		equalPositions(t, logged(t, b.DB), handledUpTo(t, b, before))
		// Read-your-writes callers learn that the position will not come.
		if err := p.WaitFor(runCtx, res.Position); !errors.Is(err, projections.ErrStopped) || !errors.Is(err, projections.ErrDecode) {
			t.Errorf("WaitFor after the stop = %v, want ErrStopped wrapping the decode error", err)
		}
	})
}

func TestApplyErrorStopsAfterRetries(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		w := newWriter(t, b)
		w.sessions(t, "alice", 3)
		var calls atomic.Int32
		failing := errors.New("boom")
		log := &eventLog{hook: func(context.Context, projections.Event) error {
			calls.Add(1)
			return failing
		}}
		p, err := projections.NewProjector(b.DB, b.Store, log, projections.Options{
			MaxAttempts: 3, RetryBackoff: time.Millisecond, Logger: projectiontest.Discard,
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), projectiontest.Timeout)
		defer cancel()
		err = p.Run(ctx)
		if !errors.Is(err, projections.ErrApply) || !errors.Is(err, failing) {
			t.Fatalf("Run = %v, want ErrApply wrapping the Apply error", err)
		}
		if n := calls.Load(); n != 3 {
			t.Errorf("Apply ran %d times, want 3 (MaxAttempts)", n)
		}
		if cp := checkpointOf(t, b.DB); cp != 0 {
			t.Errorf("checkpoint = %d after only failed batches", cp)
		}
	})
}

func TestQueuedFailureNamesItsEvent(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		w := newWriter(t, b)
		w.sessions(t, "alice", 12)
		all := handledUpTo(t, b, w.Last())
		poison := all[9]
		p, err := projections.NewProjector(b.DB, b.Store, &eventLog{queue: true, poison: poison}, projections.Options{
			MaxAttempts: 2, RetryBackoff: time.Millisecond, Logger: projectiontest.Discard,
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), projectiontest.Timeout)
		defer cancel()
		err = p.Run(ctx)
		var evErr *projections.EventError
		if !errors.Is(err, projections.ErrApply) || !errors.As(err, &evErr) || evErr.Position != poison {
			t.Fatalf("Run = %v, want an apply error naming position %d", err, poison)
		}
		cp := checkpointOf(t, b.DB)
		if cp >= poison {
			t.Fatalf("checkpoint %d passed the failing event %d", cp, poison)
		}
		var want []uint64
		for _, pos := range all {
			if pos <= cp {
				want = append(want, pos)
			}
		}
		equalPositions(t, logged(t, b.DB), want)
	})
}

func TestTransientApplyErrorIsRetried(t *testing.T) {
	b := projectiontest.SQLite(t)
	w := newWriter(t, b)
	w.sessions(t, "alice", 5)
	var failures atomic.Int32
	log := &eventLog{hook: func(context.Context, projections.Event) error {
		if failures.Add(1) <= 2 {
			return errors.New("transient")
		}
		return nil
	}}
	r := projectiontest.Start(t, b.DB, b, log, projections.Options{RetryBackoff: time.Millisecond})
	r.WaitFor(t, w.Last())
	equalPositions(t, logged(t, b.DB), handledUpTo(t, b, w.Last()))
}

func TestSetupRunsNewMigrationsOnly(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		ctx := context.Background()
		v1 := (&eventLog{}).Migrations(b.DB.Dialect())
		v2 := append(append([]string(nil), v1...), `CREATE INDEX event_log_type_idx ON {schema}.event_log (type)`)
		ms := func(m []string) map[projections.Dialect][]string {
			return map[projections.Dialect][]string{b.DB.Dialect(): m}
		}
		if err := projections.Setup(ctx, b.DB, &eventLog{migrations: ms(v1)}); err != nil {
			t.Fatal(err)
		}
		// Running the first migration again would fail (the table exists).
		if err := projections.Setup(ctx, b.DB, &eventLog{migrations: ms(v2)}); err != nil {
			t.Fatalf("Setup with one more migration: %v", err)
		}
		if err := projections.Setup(ctx, b.DB, &eventLog{migrations: ms(v2)}); err != nil {
			t.Fatalf("Setup again: %v", err)
		}
		err := projections.Setup(ctx, b.DB, &eventLog{migrations: ms(v1)})
		if err == nil || !strings.Contains(err.Error(), "newer Cairn") {
			t.Fatalf("Setup of an older build = %v, want a refusal", err)
		}
	})
}

func TestNewProjectorChecksTheProjection(t *testing.T) {
	b := projectiontest.SQLite(t)
	bad := &badProjection{}
	_, err := projections.NewProjector(b.DB, b.Store, bad, projections.Options{BatchSize: -1})
	if err == nil {
		t.Fatal("NewProjector accepted a projection without name, tables or migrations")
	}
	for _, want := range []string{"no name", `unknown event type "session.requestd"`, "no table", "no migrations", "batch size"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

type badProjection struct{}

func (badProjection) Name() string                            { return "" }
func (badProjection) EventTypes() []string                    { return []string{"session.requestd"} }
func (badProjection) Tables() []string                        { return nil }
func (badProjection) Migrations(projections.Dialect) []string { return nil }
func (badProjection) Apply(context.Context, projections.Tx, projections.Event) error {
	return nil
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts projections.Options
		ok   bool
	}{
		{"zero", projections.Options{}, true},
		{"explicit", projections.Options{BatchSize: 10, MaxAttempts: 2, RetryBackoff: time.Second, CheckpointEvery: 1}, true},
		{"negative batch", projections.Options{BatchSize: -1}, false},
		{"huge batch", projections.Options{BatchSize: 1 << 20}, false},
		{"negative attempts", projections.Options{MaxAttempts: -1}, false},
		{"negative backoff", projections.Options{RetryBackoff: -time.Second}, false},
		{"negative checkpoint", projections.Options{CheckpointEvery: -1}, false},
		{"yield off", projections.Options{Yield: -1}, true},
		{"huge yield", projections.Options{Yield: 100}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.opts.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, ok want %v", err, tc.ok)
			}
		})
	}
	err := projections.Options{BatchSize: -1, MaxAttempts: -1}.Validate()
	if err == nil || !strings.Contains(err.Error(), "batch size") || !strings.Contains(err.Error(), "max attempts") {
		t.Fatalf("Validate reports %v, want every problem", err)
	}
}
