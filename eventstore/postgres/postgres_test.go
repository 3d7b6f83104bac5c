package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/storetest"
	"github.com/cairnhq/cairn/infra/pgtest"
)

// TestConformance runs the suite every backend passes, each subtest on a
// fresh schema of the test server. Positions are sparse (derived from
// transaction ids), so DensePositions is not declared.
func TestConformance(t *testing.T) {
	storetest.RunWith(t, storetest.Options{Prune: true}, func(t *testing.T) eventstore.Store {
		url, schema := pgtest.Schema(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := Open(ctx, url, Options{Schema: schema})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() {
			// The suite closes some stores itself: then Close says ErrClosed.
			if err := s.Close(); err != nil && !errors.Is(err, eventstore.ErrClosed) {
				t.Errorf("Close: %v", err)
			}
		})
		return s
	})
}
