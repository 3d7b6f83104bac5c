// Package pgtest gives tests the PostgreSQL server that `make test` provides
// (scripts/with-postgres.sh sets CAIRN_TEST_POSTGRES_URL), and an isolated
// schema per test so suites can run in parallel on one server.
//
// Without a server, tests fail when CI=true and are skipped loudly
// otherwise: the skip is also appended to the file named by
// CAIRN_TEST_SKIP_REPORT so `make test` can print which suites did not run.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL is the variable that names the test server.
const EnvURL = "CAIRN_TEST_POSTGRES_URL"

// URL returns the test server's URL, or ends the test: t.Fatal with CI=true,
// a loud t.Skip otherwise.
func URL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(EnvURL)
	if url != "" {
		return url
	}
	msg := fmt.Sprintf("PostgreSQL suite %s NOT RUN: %s is not set (run the tests with `make test`, which starts a throwaway server, or export %s)", t.Name(), EnvURL, EnvURL)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	if path := os.Getenv("CAIRN_TEST_SKIP_REPORT"); path != "" {
		if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, msg)
			f.Close()
		}
	}
	t.Skip(msg)
	return ""
}

// Schema creates a fresh, uniquely named schema on the test server, drops
// it when the test ends, and returns the server URL and the schema name.
func Schema(t testing.TB) (url, schema string) {
	t.Helper()
	url = URL(t)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema = "test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("pgtest: connect %s: %v", url, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Logf("pgtest: drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Logf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	return url, schema
}
