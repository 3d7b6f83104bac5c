package postgres

import (
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

// Head is 0 on an empty log, then the position of the last event
// committed.
func TestHead(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	if h, err := s.Head(t.Context()); err != nil || h != 0 {
		t.Fatalf("Head of an empty log = %d, %v; want 0", h, err)
	}
	if _, err := s.Append(t.Context(), "a", eventstore.Any, events(t, "a", 3)...); err != nil {
		t.Fatal(err)
	}
	last, err := s.Append(t.Context(), "b", eventstore.Any, events(t, "b", 2)...)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := s.Head(t.Context()); err != nil || h != last.Position {
		t.Fatalf("Head = %d, %v; want %d", h, err, last.Position)
	}
}
