package sqlite

import (
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

// The SQLite store ignores fences (its leases are file locks on one
// machine): a fenced append and AppendMany are written as any other.
func TestFenceIsIgnored(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, Options{})
	ctx := eventstore.WithFence(t.Context(), eventstore.Fence{Lease: "scheduler", Epoch: 7})
	ev := func() eventstore.EventData {
		return eventstore.EventData{ID: eventstore.NewEventID(), Type: "test.happened", Data: []byte(`{}`)}
	}
	if _, err := s.Append(ctx, "s-1", eventstore.NoStream, ev()); err != nil {
		t.Fatalf("fenced Append: %v", err)
	}
	if _, err := s.AppendMany(ctx, eventstore.StreamAppend{Stream: "s-2", Expected: eventstore.NoStream, Events: []eventstore.EventData{ev(), ev()}}); err != nil {
		t.Fatalf("fenced AppendMany: %v", err)
	}
}
