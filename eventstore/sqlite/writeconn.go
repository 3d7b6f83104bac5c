package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
)

// writeConn is the single write connection and its prepared statements.
// Only the writer goroutine uses it (and Open, before the writer starts).
// Transactions are driven with plain BEGIN/COMMIT statements on the
// dedicated connection, which spares database/sql's per-transaction
// statement re-binding.
type writeConn struct {
	db   *sql.DB
	conn *sql.Conn

	begin      *sql.Stmt
	commit     *sql.Stmt
	rollback   *sql.Stmt
	savepoint  *sql.Stmt
	release    *sql.Stmt
	rollbackTo *sql.Stmt
	// The savepoint of an AppendMany, around its parts' savepoints.
	savepointMany  *sql.Stmt
	releaseMany    *sql.Stmt
	rollbackToMany *sql.Stmt

	maxPosition  *sql.Stmt
	lastRevision *sql.Stmt
	findID       *sql.Stmt
	storedRange  *sql.Stmt
	insert       *sql.Stmt
	// An AppendMany's statements (applyMany).
	lastRevisions *sql.Stmt
	insertMany    *sql.Stmt
}

func (c *writeConn) statements() []struct {
	dst   **sql.Stmt
	query string
} {
	return []struct {
		dst   **sql.Stmt
		query string
	}{
		{&c.begin, `BEGIN IMMEDIATE`},
		{&c.commit, `COMMIT`},
		{&c.rollback, `ROLLBACK`},
		{&c.savepoint, `SAVEPOINT append_events`},
		{&c.release, `RELEASE append_events`},
		{&c.rollbackTo, `ROLLBACK TO append_events`},
		{&c.savepointMany, `SAVEPOINT append_many`},
		{&c.releaseMany, `RELEASE append_many`},
		{&c.rollbackToMany, `ROLLBACK TO append_many`},
		{&c.maxPosition, `SELECT COALESCE(MAX(position), 0) FROM events`},
		{&c.lastRevision, `SELECT MAX(revision) FROM events WHERE stream = ?`},
		{&c.findID, `SELECT stream, revision, position FROM events WHERE id = ?`},
		{&c.storedRange, `SELECT id, position FROM events WHERE stream = ? AND revision >= ? AND revision < ? ORDER BY revision`},
		{&c.insert, `INSERT INTO events (position, id, stream, revision, type, version, data, metadata, recorded_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&c.lastRevisions, lastRevisionsQuery},
		{&c.insertMany, insertManyQuery},
	}
}

// connect takes a connection from db, runs setup on it (nil for none), then
// prepares the statements. On failure nothing stays open.
func (c *writeConn) connect(ctx context.Context, setup func(*sql.Conn) error) (err error) {
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return translate("connect writer", err)
	}
	c.conn = conn
	defer func() {
		if err != nil {
			err = errors.Join(err, c.close())
		}
	}()
	if setup != nil {
		if err := setup(conn); err != nil {
			return err
		}
	}
	for _, st := range c.statements() {
		stmt, err := conn.PrepareContext(ctx, st.query)
		if err != nil {
			return translate("prepare "+st.query, err)
		}
		*st.dst = stmt
	}
	return nil
}

// close closes the statements and returns the connection to db.
func (c *writeConn) close() error {
	return errors.Join(c.closeStatements(), c.closeConn())
}

// closeStatements finalizes the statements. It must run before the
// connection goes: statements prepared on a *sql.Conn are not tracked by
// database/sql, and finalizing one after its connection closed is invalid.
func (c *writeConn) closeStatements() error {
	var errs []error
	for _, st := range c.statements() {
		if *st.dst != nil {
			errs = append(errs, (*st.dst).Close())
			*st.dst = nil
		}
	}
	return errors.Join(errs...)
}

func (c *writeConn) closeConn() error {
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn = nil
	if errors.Is(err, sql.ErrConnDone) {
		return nil // reset already discarded it
	}
	return err
}

// reset throws the connection away and opens a fresh one. It is the way
// out when the connection's transaction state is unknown (a ROLLBACK that
// failed): closing an SQLite connection rolls back whatever it had open.
func (c *writeConn) reset(ctx context.Context) error {
	errs := []error{c.closeStatements()}
	if c.conn != nil {
		// Returning ErrBadConn makes database/sql close the driver
		// connection instead of pooling it.
		if err := c.conn.Raw(func(any) error { return driver.ErrBadConn }); !errors.Is(err, driver.ErrBadConn) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, c.closeConn(), c.connect(ctx, nil))
	return errors.Join(errs...)
}
