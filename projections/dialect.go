package projections

import (
	"database/sql"
	"fmt"
	"time"
)

// Dialect is the SQL database a read model lives in.
type Dialect uint8

const (
	// SQLite: modernc.org/sqlite through database/sql. Timestamps are
	// INTEGER microseconds since the Unix epoch; JSON is TEXT.
	SQLite Dialect = iota + 1
	// Postgres: PostgreSQL through pgx. Timestamps are timestamptz; JSON is
	// jsonb.
	Postgres
)

func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	}
	return fmt.Sprintf("dialect(%d)", uint8(d))
}

// Time returns t as a query argument for a timestamp column of d: NULL for
// the zero time, microseconds since the epoch on SQLite, the UTC time on
// PostgreSQL (which keeps microseconds too). NullTime scans it back.
func (d Dialect) Time(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	if d == SQLite {
		return t.UnixMicro()
	}
	return t.UTC().Truncate(time.Microsecond)
}

// lockSuffix is what makes a SELECT lock the rows it reads until the
// transaction ends. SQLite needs none: its write transaction (BEGIN
// IMMEDIATE) holds the database's only write lock.
func (d Dialect) lockSuffix() string {
	if d == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// NullTime scans a timestamp column of either dialect (microseconds on
// SQLite, timestamptz on PostgreSQL); NULL leaves Valid false. Times come
// back in UTC.
type NullTime struct {
	Time  time.Time
	Valid bool
}

// Scan implements sql.Scanner (pgx honours it too).
func (n *NullTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*n = NullTime{}
	case int64:
		*n = NullTime{Time: time.UnixMicro(v).UTC(), Valid: true}
	case time.Time:
		*n = NullTime{Time: v.UTC(), Valid: true}
	default:
		return fmt.Errorf("projections: cannot scan %T into a time", src)
	}
	return nil
}

// Ptr returns the time, or nil when it is NULL: the shape of an optional
// time in the read models' JSON.
func (n NullTime) Ptr() *time.Time {
	if !n.Valid {
		return nil
	}
	t := n.Time
	return &t
}

// NullTime has no Value method on purpose: a timestamp argument depends on
// the dialect, so it is built with Dialect.Time.
var _ sql.Scanner = (*NullTime)(nil)
