package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/storetest"
)

// TestConformance runs the suite every backend passes, on a fresh database
// file per store, with the default options (durable commits).
func TestConformance(t *testing.T) {
	storetest.RunWith(t, storetest.Options{DensePositions: true, Prune: true}, func(t *testing.T) eventstore.Store {
		s, err := Open(context.Background(), filepath.Join(t.TempDir(), "cairn.db"), Options{Logger: quietLogger})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return s
	})
}
