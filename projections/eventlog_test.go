package projections_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
)

// eventLog is a test projection that records the position, type and
// stream of every event it handles with a plain INSERT: applying an event
// twice fails on the primary key, so any duplicate stops the projector.
type eventLog struct {
	// hook, if set, runs before each insert; its error fails the Apply.
	hook func(ctx context.Context, ev projections.Event) error
	// migrations, if set, replaces the default DDL.
	migrations map[projections.Dialect][]string
	// queue makes Apply queue its insert (Tx.Queue) instead of running it;
	// poison, if set, makes the insert of that position violate NOT NULL.
	queue  bool
	poison uint64
}

var logTypes = []string{domain.TypeSessionRequested, domain.TypeSessionCancelled, domain.TypeAgentRegistered}

func (l *eventLog) Name() string         { return "event_log" }
func (l *eventLog) EventTypes() []string { return logTypes }
func (l *eventLog) Tables() []string     { return []string{"event_log"} }

func (l *eventLog) Migrations(d projections.Dialect) []string {
	if l.migrations != nil {
		return l.migrations[d]
	}
	if d == projections.SQLite {
		return []string{`CREATE TABLE {schema}.event_log (position INTEGER PRIMARY KEY, type TEXT NOT NULL, stream TEXT NOT NULL) STRICT`}
	}
	return []string{`CREATE TABLE {schema}.event_log (position bigint PRIMARY KEY, type text NOT NULL, stream text NOT NULL)`}
}

func (l *eventLog) Apply(ctx context.Context, tx projections.Tx, ev projections.Event) error {
	if l.hook != nil {
		if err := l.hook(ctx, ev); err != nil {
			return err
		}
	}
	insert := tx.SQL(`INSERT INTO {schema}.event_log (position, type, stream) VALUES ($1, $2, $3)`)
	var typ any = ev.Type
	if ev.Position == l.poison {
		typ = nil
	}
	if l.queue {
		tx.Queue(insert, int64(ev.Position), typ, ev.Stream)
		return nil
	}
	_, err := tx.Exec(ctx, insert, int64(ev.Position), typ, ev.Stream)
	return err
}

// logged returns the positions in the event log, in order.
func logged(t testing.TB, db *projections.DB) []uint64 {
	t.Helper()
	var out []uint64
	for _, row := range projectiontest.Dump(t, db, "event_log", 3, "position") {
		first, _, _ := strings.Cut(row, " | ")
		p, err := strconv.ParseUint(first, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// handledUpTo returns the positions of the events up to upTo that the
// event log handles.
func handledUpTo(t testing.TB, b *projectiontest.Backend, upTo uint64) []uint64 {
	t.Helper()
	var out []uint64
	for _, ev := range projectiontest.Events(t, b.Store, upTo) {
		for _, typ := range logTypes {
			if ev.Type == typ && ev.Position <= upTo {
				out = append(out, ev.Position)
			}
		}
	}
	return out
}

func equalPositions(t testing.TB, got, want []uint64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("event log has %d events, want %d\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("event log entry %d is position %d, want %d", i, got[i], want[i])
		}
	}
}

// writer appends through the command handlers and remembers the last
// position it was given.
type writer struct {
	h    *commands.Handlers
	b    *projectiontest.Backend
	mu   sync.Mutex
	last uint64
	n    atomic.Int64
}

func newWriter(t testing.TB, b *projectiontest.Backend) *writer {
	return &writer{h: projectiontest.Handlers(t, b), b: b}
}

func (w *writer) saw(pos uint64) {
	w.mu.Lock()
	w.last = max(w.last, pos)
	w.mu.Unlock()
}

// Last is the largest position appended so far.
func (w *writer) Last() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// sessions requests n sessions and cancels every third: two handled
// events for those, one for the others.
func (w *writer) sessions(t testing.TB, owner string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		res, err := w.h.RequestSession.Handle(ctx, projectiontest.MD, commands.RequestSession{Spec: projectiontest.SessionSpec(owner, "", 1)})
		if err != nil {
			t.Error(err)
			return
		}
		w.saw(res.Position)
		if i%3 == 0 {
			out, err := w.h.CancelPendingSession.Handle(ctx, projectiontest.MD, commands.CancelPendingSession{SessionID: res.SessionID})
			if err != nil {
				t.Error(err)
				return
			}
			w.saw(out.Position)
		}
		w.n.Add(1)
	}
}

// noise appends n events of a type no projection handles.
func (w *writer) noise(t testing.TB, n int) {
	t.Helper()
	for i := range n {
		ev, err := eventstore.NewEvent("test.noise", map[string]int{"i": i}, eventstore.Metadata{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := w.b.Store.Append(context.Background(), fmt.Sprintf("noise-%d", i), eventstore.Any, ev)
		if err != nil {
			t.Fatal(err)
		}
		w.saw(res.Position)
	}
}

// agents registers n agents.
func (w *writer) agents(t testing.TB, n int) {
	t.Helper()
	for i := range n {
		res, err := w.h.RegisterAgent.Handle(context.Background(), projectiontest.MD,
			commands.RegisterAgent{Spec: projectiontest.AgentSpec(fmt.Sprintf("node-%d", i), 8)})
		if err != nil {
			t.Fatal(err)
		}
		w.saw(res.Position)
	}
}
