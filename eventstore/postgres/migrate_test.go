package postgres

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/pgtest"
)

func TestMigrationsAreNumberedAndLoad(t *testing.T) {
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, m := range ms {
		if m.version != i+1 || !strings.Contains(m.body, schemaPlaceholder) {
			t.Errorf("migration %d: version %d, uses the schema placeholder: %v", i, m.version, strings.Contains(m.body, schemaPlaceholder))
		}
	}
}

// TestConcurrentOpensMigrateOnce: several processes starting at once on an
// empty schema apply each migration once.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	t.Parallel()
	url, schema := pgtest.Schema(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := Open(ctx, url, Options{Schema: schema})
			if err != nil {
				errs <- err
				return
			}
			errs <- s.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, url)
	var count int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM `+quoteIdent(schema)+`.schema_migrations`).Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != len(ms) {
		t.Fatalf("schema_migrations has %d rows, want %d", count, len(ms))
	}
}

func TestOpenRefusesForeignMigrations(t *testing.T) {
	t.Parallel()
	url, schema := pgtest.Schema(t)
	s := openStoreAt(t, url, Options{Schema: schema})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, url)
	ctx := t.Context()
	table := quoteIdent(schema) + ".schema_migrations"

	// An edited migration.
	if _, err := conn.Exec(ctx, `UPDATE `+table+` SET checksum = 'edited' WHERE version = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, url, Options{Schema: schema}); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("Open over an edited migration = %v, want a checksum error", err)
	}
	if _, err := conn.Exec(ctx, `UPDATE `+table+` SET checksum = $1 WHERE version = 1`, mustMigrations(t)[0].checksum); err != nil {
		t.Fatal(err)
	}

	// A migration from a newer build.
	if _, err := conn.Exec(ctx, `INSERT INTO `+table+` (version, name, checksum) VALUES (999, 'future', 'x')`); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, url, Options{Schema: schema}); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open over a newer schema = %v, want a refusal", err)
	}
}

func TestOpenCreatesMissingSchema(t *testing.T) {
	t.Parallel()
	url, base := pgtest.Schema(t)
	schema := base + "_new"
	conn := connect(t, url)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+quoteIdent(schema)+` CASCADE`); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	openStoreAt(t, url, Options{Schema: schema})
	var exists bool
	if err := conn.QueryRow(t.Context(), `SELECT to_regclass($1) IS NOT NULL`, schema+".events").Scan(&exists); err != nil || !exists {
		t.Fatalf("events table in the new schema: %v, %v", exists, err)
	}
}

// Event payloads are compressed with lz4 (migration 0005) wherever the
// server has it; a server without it must really refuse lz4.
func TestPayloadsUseLZ4(t *testing.T) {
	t.Parallel()
	url, schema := pgtest.Schema(t)
	openStoreAt(t, url, Options{Schema: schema})
	conn := connect(t, url)
	ctx := t.Context()
	rows, err := conn.Query(ctx, `SELECT attname, attcompression::text FROM pg_attribute
WHERE attrelid = to_regclass($1) AND attname IN ('data', 'metadata') ORDER BY attname`, quoteIdent(schema)+".events")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rows.Next() {
		var name, method string
		if err := rows.Scan(&name, &method); err != nil {
			t.Fatal(err)
		}
		got[name] = method
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if got["data"] == "l" && got["metadata"] == "l" {
		return
	}
	_, err = conn.Exec(ctx, `CREATE TEMPORARY TABLE lz4_probe (b bytea COMPRESSION lz4)`)
	if err == nil {
		t.Fatalf("payload compression %v, want lz4 (l): the server supports it", got)
	}
	if !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("payload compression %v; the server refuses lz4 with an unexpected error: %v", got, err)
	}
	t.Logf("this server has no lz4 (%v): payloads keep the default compression", err)
}

func mustMigrations(t *testing.T) []migration {
	t.Helper()
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	return ms
}
