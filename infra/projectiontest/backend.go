package projectiontest

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/pgtest"
	"github.com/cairnhq/cairn/infra/readmodels"
	"github.com/cairnhq/cairn/projections"
)

// Backend is an event store with a projections.DB on the same database.
type Backend struct {
	// Name is the dialect's name: "sqlite" or "postgres".
	Name  string
	Store eventstore.Store
	DB    *projections.DB
	// OpenDB opens another DB handle on the same database, as a second
	// server replica (or a rebuild in another process) would; it is closed
	// when the test ends.
	OpenDB func(t testing.TB) *projections.DB
}

// Discard is a logger that drops everything, for quiet tests.
var Discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// Run runs fn as a parallel subtest per backend. The PostgreSQL one needs
// the test server (see infra/pgtest: it fails with CI=true and is skipped
// loudly otherwise).
func Run(t *testing.T, fn func(t *testing.T, b *Backend)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, SQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, Postgres(t))
	})
}

// SQLite opens a store on a fresh file and the read models' DB on it.
func SQLite(t testing.TB) *Backend {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cairn.db")
	store, err := sqlite.Open(context.Background(), path, sqlite.Options{Logger: Discard})
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	open := func(t testing.TB) *projections.DB {
		t.Helper()
		db, err := readmodels.OpenSQLite(store, sqlite.Options{})
		if err != nil {
			t.Fatalf("OpenSQLite: %v", err)
		}
		t.Cleanup(func() {
			if err := db.Close(); err != nil {
				t.Errorf("close db: %v", err)
			}
		})
		return db
	}
	return &Backend{Name: "sqlite", Store: store, DB: open(t), OpenDB: open}
}

// Postgres opens a store on a fresh schema of the test server and the read
// models' DB on its pool.
func Postgres(t testing.TB) *Backend {
	t.Helper()
	url, schema := pgtest.Schema(t)
	open := func(t testing.TB) *postgres.Store {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		store, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, Logger: Discard, MaxConns: 8})
		if err != nil {
			t.Fatalf("postgres.Open: %v", err)
		}
		t.Cleanup(func() {
			if err := store.Close(); err != nil {
				t.Errorf("close store: %v", err)
			}
		})
		return store
	}
	store := open(t)
	newDB := func(t testing.TB, s *postgres.Store) *projections.DB {
		t.Helper()
		db, err := readmodels.NewPostgres(s.Pool(), s.Schema())
		if err != nil {
			t.Fatalf("NewPostgres: %v", err)
		}
		return db
	}
	return &Backend{
		Name:  "postgres",
		Store: store,
		DB:    newDB(t, store),
		// Another replica has a pool of its own.
		OpenDB: func(t testing.TB) *projections.DB { return newDB(t, open(t)) },
	}
}
