package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/sqlite"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// A real SQLITE_FULL (a database capped by max_page_count) is translated
// into the store's disk-full error: KindUnavailable, ErrStorageFull, with
// the driver's error still reachable.
func TestTranslateFullDatabase(t *testing.T) {
	db, err := sql.Open(driverName, filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	for _, q := range []string{"PRAGMA max_page_count = 8", "CREATE TABLE t (b BLOB)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var insertErr error
	for i := 0; i < 100 && insertErr == nil; i++ {
		_, insertErr = db.ExecContext(ctx, "INSERT INTO t VALUES (zeroblob(1024))")
	}
	if insertErr == nil {
		t.Fatal("100 KiB fit in a database of 8 pages")
	}
	if !IsFull(insertErr) {
		t.Fatalf("IsFull(%v) = false", insertErr)
	}
	err = translate("append", insertErr)
	var se *sqlite.Error
	if domain.KindOf(err) != domain.KindUnavailable || !errors.Is(err, eventstore.ErrStorageFull) || !errors.As(err, &se) ||
		!strings.Contains(err.Error(), "the data disk is full") {
		t.Fatalf("translate = %v (kind %s)", err, domain.KindOf(err))
	}
	if other := translate("append", errors.New("boom")); errors.Is(other, eventstore.ErrStorageFull) || domain.KindOf(other) != domain.KindInternal {
		t.Errorf("translate(boom) = %v: not a full disk", other)
	}
}

// The store keeps its -wal and -shm files at close (persistent WAL): a
// start on a full disk could not create the -shm file, without which a
// database in WAL mode does not open.
func TestCloseKeepsTheWALFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	ctx := context.Background()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "s", eventstore.Any, events("e", 3)...); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err != nil {
			t.Errorf("after Close: %v", err)
		}
	}
	s, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if evs, err := s.ReadStream(ctx, "s", eventstore.ReadStreamOptions{}); err != nil || len(evs) != 3 {
		t.Fatalf("after a restart: %d events, %v", len(evs), err)
	}
}
