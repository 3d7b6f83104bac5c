package commandapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/maintenance"
	"github.com/cairnhq/cairn/infra/readmodels"
	"github.com/cairnhq/cairn/projections"
)

// newMaintenance is the maintenance service over the test store, as the
// server makes it (infra/devserver); it stops when the test ends.
func newMaintenance(t testing.TB, store *sqlite.Store, db *projections.DB, opts envOptions) *maintenance.Service {
	t.Helper()
	m, err := maintenance.New(maintenance.Config{
		Store: store,
		DB:    db,
		ReadModels: func(db *projections.DB, name string) (projections.Projection, error) {
			sel, err := readmodels.New(db, store).Select([]string{name})
			if err != nil {
				return nil, err
			}
			return sel[0], nil
		},
		Shadow: func(ctx context.Context, name string) (*projections.DB, func() error, error) {
			if opts.rebuildGate != nil {
				select {
				case <-opts.rebuildGate:
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
			}
			return readmodels.OpenShadow(ctx, store, db, name)
		},
		System: maintenance.SystemConfig{
			Version:  "test",
			StoreDSN: opts.storeDSN,
			Bus: func() maintenance.Bus {
				return maintenance.Bus{Mode: "embedded", URL: "nats://127.0.0.1:4222", Connected: true}
			},
			Leases:      maintenance.NewLeases("file lock beside the SQLite store", nil),
			DataDirFree: func() int64 { return 1 << 30 },
		},
		Logger: discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// startProjector runs a projector of p until the test ends, when Run
// must return nil; under m when one is given (so that a rebuild can hold
// it).
func startProjector(t testing.TB, db *projections.DB, store *sqlite.Store, p projections.Projection, m ...*maintenance.Service) *projections.Projector {
	t.Helper()
	pr, err := projections.NewProjector(db, store, p, projections.Options{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	run := pr.Run
	if len(m) > 0 {
		run = m[0].Supervise(pr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("projector %s: %v", pr.Name(), err)
			}
		case <-time.After(waitBound):
			t.Errorf("projector %s did not stop", pr.Name())
		}
	})
	return pr
}
