package schedbench_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/cmd/cairn-bench/internal/schedbench"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/readmodels"
)

// TestRunSmall runs the benchmark at a small scale: every placement it
// counts must be visible in the read side (Run checks), and a queue larger
// than the fleet leaves some sessions waiting.
func TestRunSmall(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cairn.db"), sqlite.Options{Synchronous: "normal", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	db, err := readmodels.OpenSQLite(store, sqlite.Options{Synchronous: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := schedbench.Run(ctx, store, db, schedbench.Config{Agents: 20, Sessions: 600, Seed: 7, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Placed == 0 || res.Placed >= res.Sessions || res.Rounds == 0 || res.Schedule <= 0 {
		t.Fatalf("result %+v: want some but not all of %d sessions placed", res, res.Sessions)
	}
}

// BenchmarkRun is the end-to-end run at a tenth of the scale on
// SQLite, for profiling (go test -bench Run -cpuprofile ...);
// `cairn-bench schedule` runs the full scale on both backends.
func BenchmarkRun(b *testing.B) {
	for b.Loop() {
		ctx := context.Background()
		store, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "cairn.db"), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		db, err := readmodels.OpenSQLite(store, sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := schedbench.Run(ctx, store, db, schedbench.Config{Agents: 100, Sessions: 1000, Seed: 1, Timeout: time.Minute})
		db.Close()
		store.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.PlacementsPerSecond(), "placements/s")
	}
}
