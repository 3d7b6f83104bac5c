package projections

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/eventstore/sqlite"
)

// Statements run through Exec and Queue are prepared once, at the next
// begin, and reused; transactions on the one write connection that run
// new statements concurrently do not wait for each other's preparing.
func TestSQLiteStatementsArePreparedOnceWithoutDeadlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	write, err := sqlite.OpenRaw(filepath.Join(t.TempDir(), "rm.db"), sqlite.Options{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	db := NewSQLite(write, nil, SQLiteOptions{IsFull: sqlite.IsFull})
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
		write.Close()
	})
	b := db.b.(*sqliteBackend)
	inTx := func(fn func(tx txn) error) {
		t.Helper()
		if err := db.inTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	inTx(func(tx txn) error { _, err := tx.Exec(ctx, "CREATE TABLE t (k INTEGER, v TEXT)"); return err })
	insert := "INSERT INTO t (k, v) VALUES (?, ?)"
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				// Each worker's own statement, new on its first use.
				q := fmt.Sprintf("INSERT INTO t (k, v) VALUES (?, '%d')", w)
				if err := db.inTx(ctx, func(tx txn) error {
					tx.Queue(q, i)
					tx.Queue(insert, i, "shared")
					return tx.Flush(ctx)
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var n int
	if err := db.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 4*20*2 {
		t.Fatalf("rows %d (%v), want %d", n, err, 4*20*2)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.stmts[insert]; !ok || len(b.stmts) != 1+4 {
		t.Fatalf("prepared statements %d, want the shared insert and one per worker", len(b.stmts))
	}
	// A statement that does not prepare still fails where it runs.
	b.mu.Unlock()
	err = db.inTx(ctx, func(tx txn) error { _, err := tx.Exec(ctx, "INSERT INTO nowhere VALUES (1)"); return err })
	b.mu.Lock()
	if err == nil {
		t.Fatal("an insert into a missing table succeeded")
	}
}

// Version is unsettled while a write transaction is under way, and
// changes with every one, committed or rolled back.
func TestVersionFollowsWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	write, err := sqlite.OpenRaw(filepath.Join(t.TempDir(), "rm.db"), sqlite.Options{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	db := NewSQLite(write, nil, SQLiteOptions{CloseWrite: true})
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	v0, settled := db.Version()
	if !settled {
		t.Fatal("unsettled before any write")
	}
	var inside bool
	if err := db.inTx(ctx, func(tx txn) error {
		_, inside = db.Version()
		_, err := tx.Exec(ctx, "CREATE TABLE t (k INTEGER)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	v1, settled := db.Version()
	if inside || !settled || v1 == v0 {
		t.Fatalf("settled inside the write %v; after it version %d (before %d), settled %v", inside, v1, v0, settled)
	}
	failed := fmt.Errorf("rolled back")
	if err := db.inTx(ctx, func(tx txn) error { return failed }); err == nil {
		t.Fatal("the failing write committed")
	}
	if v2, settled := db.Version(); !settled || v2 == v1 {
		t.Fatalf("after a rolled-back write: version %d (before %d), settled %v", v2, v1, settled)
	}
}

// The read side's statements are prepared once on the read pool; one that
// does not prepare yet (its table is missing) runs unprepared and is
// prepared once it can be.
func TestSQLiteReadStatementsArePreparedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "rm.db")
	write, err := sqlite.OpenRaw(path, sqlite.Options{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	read, err := sqlite.OpenRaw(path, sqlite.Options{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	db := NewSQLite(write, read, SQLiteOptions{CloseWrite: true})
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
		read.Close()
	})
	b := db.b.(*sqliteBackend)
	query := "SELECT v FROM t WHERE k = $1"
	var v string
	if err := db.QueryRow(ctx, query, 1).Scan(&v); err == nil {
		t.Fatal("a query of a missing table answered")
	}
	if err := db.inTx(ctx, func(tx txn) error {
		if _, err := tx.Exec(ctx, "CREATE TABLE t (k INTEGER, v TEXT)"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO t (k, v) VALUES (1, 'one'), (2, 'two')")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[int]string{1: "one", 2: "two"} {
		if err := db.QueryRow(ctx, query, k).Scan(&v); err != nil || v != want {
			t.Fatalf("row %d: %q, %v", k, v, err)
		}
		rows, err := db.Query(ctx, query, k)
		if err != nil {
			t.Fatal(err)
		}
		if !rows.Next() || rows.Scan(&v) != nil || v != want {
			t.Fatalf("rows %d: %q", k, v)
		}
		rows.Close()
	}
	b.readMu.RLock()
	n := len(b.reads)
	b.readMu.RUnlock()
	if n != 1 {
		t.Fatalf("%d read statements prepared, want the one", n)
	}
}
