package readmodels_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/pgtest"
	"github.com/cairnhq/cairn/infra/readmodels"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/sessions"
)

// The read-only read models read what the projectors wrote, and
// PostgreSQL refuses every write through them.
func TestOpenReadOnly(t *testing.T) {
	url, schema := pgtest.Schema(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	storeDSN := url + sep + "schema=" + schema
	ctx := context.Background()

	// The owner: the event store, its read models' tables made.
	store, rwDB, err := readmodels.Open(ctx, storeDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	proj, err := projections.NewProjector(rwDB, store, sessions.New(rwDB), projections.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- proj.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-ran })
	select {
	case <-proj.CaughtUp():
	case err := <-ran:
		t.Fatalf("projector: %v", err)
	}

	db, pool, err := readmodels.OpenReadOnly(ctx, storeDSN, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := sessions.New(db).GetSession(ctx, uuid.New()); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("an unknown session through the read-only models: %v, want not found", err)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE "+schema+".intruder (x int)"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("a write through the read-only pool: %v, want PostgreSQL's refusal", err)
	}
	if _, _, err := readmodels.OpenReadOnly(ctx, "sqlite:///tmp/x.db", 2); err == nil {
		t.Fatal("a SQLite store was accepted")
	}
}
