package sqlite

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

// Head is 0 on an empty log, then the position of the last event
// committed, and ErrClosed once the store is closed.
func TestHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTestStore(t, Options{})
	if h, err := s.Head(ctx); err != nil || h != 0 {
		t.Fatalf("Head of an empty log = %d, %v; want 0", h, err)
	}
	mustAppend(t, s, "a", eventstore.Any, events("t", 3)...)
	last := mustAppend(t, s, "b", eventstore.Any, events("t", 2)...)
	if h, err := s.Head(ctx); err != nil || h != last.Position {
		t.Fatalf("Head = %d, %v; want %d", h, err, last.Position)
	}
	s2 := openTestStore(t, Options{})
	s2.Close()
	if _, err := s2.Head(ctx); !errors.Is(err, eventstore.ErrClosed) {
		t.Fatalf("Head of a closed store: %v, want ErrClosed", err)
	}
}
