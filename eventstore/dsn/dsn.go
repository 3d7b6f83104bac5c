// Package dsn opens an event store backend chosen by the scheme of a DSN:
//
//	sqlite:///var/lib/cairn/cairn.db[?synchronous=NORMAL...]   eventstore/sqlite
//	postgres://user:pass@host:5432/db[?schema=NAME&...]       eventstore/postgres
//
// It is the one place that knows every backend, so the rest of Cairn
// depends only on the eventstore.Store port.
package dsn

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/eventstore/sqlite"
)

// Open opens the backend named by dsn's scheme.
func Open(ctx context.Context, dsn string) (eventstore.Store, error) {
	scheme, _, ok := strings.Cut(dsn, ":")
	if !ok {
		return nil, fmt.Errorf("event store DSN %q: missing scheme (sqlite:// or postgres://)", dsn)
	}
	switch strings.ToLower(scheme) {
	case sqlite.Scheme:
		return sqlite.OpenDSN(ctx, dsn)
	case "postgres", "postgresql":
		url, opts, err := ParsePostgres(dsn)
		if err != nil {
			return nil, err
		}
		return postgres.Open(ctx, url, opts)
	}
	return nil, fmt.Errorf("event store DSN: unknown scheme %q (sqlite, postgres)", scheme)
}

// ParsePostgres takes Cairn's own parameters (schema) out of a PostgreSQL
// URL, leaving the rest for pgx (which would send unknown parameters to
// the server as settings).
func ParsePostgres(dsn string) (string, postgres.Options, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", postgres.Options{}, fmt.Errorf("event store DSN: %w", err)
	}
	q := u.Query()
	opts := postgres.Options{Schema: q.Get("schema")}
	q.Del("schema")
	u.RawQuery = q.Encode()
	return u.String(), opts, nil
}
