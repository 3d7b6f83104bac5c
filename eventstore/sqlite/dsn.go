package sqlite

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Scheme is the DSN scheme of this backend.
const Scheme = "sqlite"

// ParseDSN splits a DSN of this backend into the database path and options.
//
// Everything between "sqlite://" (or "sqlite:") and the query is a file
// system path, percent-decoded, as in kine and most Go SQLite tools:
//
//	sqlite:///var/lib/cairn/cairn.db   absolute path /var/lib/cairn/cairn.db
//	sqlite://data/cairn.db             relative to the working directory
//	sqlite://./data/cairn.db           the same
//	sqlite:data/cairn.db               the same
//
// So "sqlite://host/x.db" is the relative path host/x.db, not a host. An
// in-memory database (":memory:") is refused: readers and the writer use
// separate connections, which would each see their own empty database.
//
// Query parameters set Options (each at most once; unknown ones are refused
// so a typo is not silently ignored):
//
//	synchronous=FULL|NORMAL
//	max_event_size=BYTES
//	max_batch=N
//	busy_timeout=DURATION   a Go duration ("5s") or milliseconds ("5000")
//	read_conns=N
func ParseDSN(dsn string) (path string, opts Options, err error) {
	rest, ok := cutPrefixFold(dsn, Scheme+":")
	if !ok {
		return "", Options{}, fmt.Errorf("eventstore/sqlite: DSN %q: scheme must be %q", dsn, Scheme)
	}
	rest = strings.TrimPrefix(rest, "//")
	rawPath, rawQuery, _ := strings.Cut(rest, "?")
	path, err = url.PathUnescape(rawPath)
	if err != nil {
		return "", Options{}, fmt.Errorf("eventstore/sqlite: DSN path %q: %w", rawPath, err)
	}
	if err := checkPath(path); err != nil {
		return "", Options{}, err
	}
	query, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", Options{}, fmt.Errorf("eventstore/sqlite: DSN query %q: %w", rawQuery, err)
	}
	if err := applyQuery(&opts, query); err != nil {
		return "", Options{}, err
	}
	if err := opts.Validate(); err != nil {
		return "", Options{}, err
	}
	return path, opts, nil
}

// OpenDSN is ParseDSN followed by Open.
func OpenDSN(ctx context.Context, dsn string) (*Store, error) {
	path, opts, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return Open(ctx, path, opts)
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// checkPath refuses paths Open cannot honour.
func checkPath(path string) error {
	switch {
	case path == "":
		return errors.New("eventstore/sqlite: empty database path")
	case path == ":memory:" || strings.HasPrefix(path, "file::memory:"):
		return errors.New("eventstore/sqlite: in-memory databases are not supported (readers and the writer use separate connections)")
	case strings.ContainsRune(path, 0):
		return errors.New("eventstore/sqlite: database path contains NUL")
	}
	return nil
}

func applyQuery(opts *Options, query url.Values) error {
	var errs []error
	for key, values := range query {
		if len(values) != 1 {
			errs = append(errs, fmt.Errorf("DSN parameter %s given %d times", key, len(values)))
			continue
		}
		v := values[0]
		var err error
		switch key {
		case "synchronous":
			opts.Synchronous = v
		case "max_event_size":
			opts.MaxEventSize, err = strconv.Atoi(v)
		case "max_batch":
			opts.MaxBatch, err = strconv.Atoi(v)
		case "read_conns":
			opts.ReadConns, err = strconv.Atoi(v)
		case "busy_timeout":
			opts.BusyTimeout, err = parseMillisOrDuration(v)
		default:
			err = errors.New("unknown parameter")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("DSN parameter %s=%q: %w", key, v, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("eventstore/sqlite: %w", err)
	}
	return nil
}

func parseMillisOrDuration(v string) (time.Duration, error) {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		if ms < 0 || ms > int64(time.Duration(1<<62)/time.Millisecond) {
			return 0, errors.New("out of range")
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	return time.ParseDuration(v)
}

// Connection roles, which decide the pragmas a connection gets.
type connRole uint8

const (
	roleWriter connRole = iota
	roleReader
	roleRaw
	// roleManagedRaw is a raw connection of a running store's process
	// (Store.OpenRaw): the store's checkpointer does its checkpoints.
	roleManagedRaw
	roleCheckpointer
)

// writerCacheKiB bounds the page cache of a writing connection.
const writerCacheKiB = 64 << 10

// driverDSN builds the modernc.org/sqlite data source name for path: a
// "file:" URI (so any path character survives) with the pragmas of role.
func driverDSN(path string, opts Options, role connRole) string {
	q := url.Values{}
	pragmas := []string{fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds())}
	switch role {
	case roleWriter, roleRaw, roleManagedRaw:
		pragmas = append(pragmas, "synchronous("+opts.Synchronous+")",
			// Statement and savepoint journals (a statement that changes
			// several rows, the savepoint of a multi-event append) in
			// memory, not in a temporary file written page by page: they
			// only undo part of an open transaction, so a crash loses
			// nothing with them (the WAL is the durability).
			"temp_store(memory)",
			// A page cache of up to 64 MiB (SQLite's default is 2 MiB),
			// taken only as pages are read: the writers touch the indexes
			// of the whole log (the event-id and stream lookups of every
			// append) and the read models' tables (thousands of rows a
			// batch), and with the default they evict pages they need
			// again at once and read them back from the file, and spill
			// dirty pages before the commit.
			fmt.Sprintf("cache_size(%d)", -writerCacheKiB))
		// BEGIN takes the write lock at once: a deferred transaction that
		// upgrades later can fail with SQLITE_BUSY without waiting.
		q.Set("_txlock", "immediate")
		if role != roleRaw {
			// The store's checkpointer copies the WAL back (see
			// checkpointer), not the commit that crosses 1000 pages.
			pragmas = append(pragmas, "wal_autocheckpoint(0)")
		}
	case roleCheckpointer:
		// A checkpoint syncs as its writers do.
		pragmas = append(pragmas, "synchronous("+opts.Synchronous+")")
	case roleReader:
		pragmas = append(pragmas, "query_only(1)")
	}
	q["_pragma"] = pragmas
	return "file:" + escapeURIPath(path) + "?" + q.Encode()
}

// escapeURIPath escapes the characters that end or alter the path part of
// an SQLite URI filename.
func escapeURIPath(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '%', '?', '#':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
