package dsn

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/pgtest"
)

func TestOpenSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	store, err := Open(context.Background(), "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ev, err := eventstore.NewEvent("test.happened", map[string]int{"n": 1}, eventstore.Metadata{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(context.Background(), "s-1", eventstore.NoStream, ev); err != nil {
		t.Fatal(err)
	}
}

func TestOpenPostgres(t *testing.T) {
	url, schema := pgtest.Schema(t)
	u, opts, err := ParsePostgres(url + "&schema=" + schema)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Schema != schema || u != mustStrip(t, url) {
		t.Fatalf("ParsePostgres: %q %+v", u, opts)
	}
	store, err := Open(context.Background(), url+"&schema="+schema)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ev, err := eventstore.NewEvent("test.happened", map[string]int{"n": 1}, eventstore.Metadata{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(context.Background(), "s-1", eventstore.NoStream, ev); err != nil {
		t.Fatal(err)
	}
}

func mustStrip(t *testing.T, url string) string {
	t.Helper()
	u, _, err := ParsePostgres(url)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestOpenRejectsUnknownScheme(t *testing.T) {
	for _, dsn := range []string{"mysql://x", "no-scheme", "kurrentdb://x"} {
		if _, err := Open(context.Background(), dsn); err == nil {
			t.Errorf("Open(%q) should fail", dsn)
		}
	}
}
