package postgres

import (
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/pgtest"
)

// TestCaughtUpWaitsForHiddenEvents: events committed before Subscribe but
// held behind the horizon by an older open transaction are delivered before
// CaughtUp, not after it.
func TestCaughtUpWaitsForHiddenEvents(t *testing.T) {
	t.Parallel()
	url, schema := pgtest.Schema(t)
	s := openStoreAt(t, url, Options{Schema: schema})
	ctx := t.Context()
	conn := connect(t, url)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "hidden", eventstore.NoStream, events(t, "hidden", 3)...); err != nil {
		t.Fatal(err)
	}

	reads := s.allReads.Load()
	sub, err := s.Subscribe(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// While the older transaction runs, the subscription can deliver
	// nothing, and must not claim to be caught up. Its goroutine hands on
	// what one read returned before it reads again: once it has read
	// twice, whatever the first read found is in Messages.
	await.Until(t, 30*time.Second, "the subscription's second read", func() bool { return s.allReads.Load() >= reads+2 })
	select {
	case msg := <-sub.Messages():
		t.Fatalf("got %+v while the events are behind the horizon", msg)
	default:
	}

	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got := waitCaughtUp(t, sub, 30*time.Second)
	if len(got) != 3 || labelOf(t, got[2]) != "hidden-2" {
		t.Fatalf("before CaughtUp: %d events, want the 3 appended before Subscribe", len(got))
	}
}
