package sqlite

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestParseDSN(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dsn  string
		path string
		opts Options
	}{
		{"sqlite:///var/lib/cairn/cairn.db", "/var/lib/cairn/cairn.db", Options{}},
		{"sqlite://data/cairn.db", "data/cairn.db", Options{}},
		{"sqlite://./data/cairn.db", "./data/cairn.db", Options{}},
		{"sqlite:data/cairn.db", "data/cairn.db", Options{}},
		{"SQLite:///x.db", "/x.db", Options{}},
		{"sqlite:///a%20b%3Fc.db", "/a b?c.db", Options{}},
		{
			"sqlite:///x.db?synchronous=NORMAL&max_event_size=1024&max_batch=64&busy_timeout=250ms&read_conns=8",
			"/x.db",
			Options{Synchronous: "NORMAL", MaxEventSize: 1024, MaxBatch: 64, BusyTimeout: 250 * time.Millisecond, ReadConns: 8},
		},
		{"sqlite:///x.db?busy_timeout=1500", "/x.db", Options{BusyTimeout: 1500 * time.Millisecond}},
	}
	for _, tt := range tests {
		path, opts, err := ParseDSN(tt.dsn)
		if err != nil {
			t.Errorf("ParseDSN(%q): %v", tt.dsn, err)
			continue
		}
		if path != tt.path || opts != tt.opts {
			t.Errorf("ParseDSN(%q) = %q %+v, want %q %+v", tt.dsn, path, opts, tt.path, tt.opts)
		}
	}
}

func TestParseDSNRefuses(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"",
		"postgres://host/db",
		"sqlite://",
		"sqlite:",
		"sqlite://:memory:",
		"sqlite:///x.db?synchronous=OFF",
		"sqlite:///x.db?max_batch=lots",
		"sqlite:///x.db?max_batch=1&max_batch=2",
		"sqlite:///x.db?journal_mode=DELETE",
		"sqlite:///x.db?busy_timeout=-5",
		"sqlite:///a%zz.db",
	} {
		if path, _, err := ParseDSN(dsn); err == nil {
			t.Errorf("ParseDSN(%q) accepted, path %q", dsn, path)
		}
	}
}

func TestDriverDSNKeepsThePath(t *testing.T) {
	t.Parallel()
	dsn := driverDSN("/tmp/a?b#c%d.db", Options{}.WithDefaults(), roleWriter)
	rest, ok := strings.CutPrefix(dsn, "file:")
	if !ok {
		t.Fatalf("DSN %q is not a file: URI", dsn)
	}
	rawPath, _, _ := strings.Cut(rest, "?")
	if path, err := url.PathUnescape(rawPath); err != nil || path != "/tmp/a?b#c%d.db" {
		t.Fatalf("path in %q decodes to %q, %v", dsn, path, err)
	}
}

func FuzzParseDSN(f *testing.F) {
	for _, seed := range []string{
		"sqlite:///var/lib/cairn/cairn.db?synchronous=NORMAL",
		"sqlite://data/x.db?busy_timeout=5s&read_conns=2",
		"sqlite:x.db?max_batch=%zz",
		"sqlite:///%2e%2e/x.db",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		path, opts, err := ParseDSN(dsn)
		if err != nil {
			return
		}
		if path == "" || strings.ContainsRune(path, 0) {
			t.Fatalf("ParseDSN(%q) accepted path %q", dsn, path)
		}
		if err := opts.Validate(); err != nil {
			t.Fatalf("ParseDSN(%q) returned invalid options: %v", dsn, err)
		}
	})
}
