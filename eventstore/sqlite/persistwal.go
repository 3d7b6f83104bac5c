package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"

	sqlitedriver "modernc.org/sqlite"
)

// persistWAL opens the store's connections with SQLite's persistent WAL
// (SQLITE_FCNTL_PERSIST_WAL): the last connection to close leaves the -wal
// and -shm files in place instead of deleting them. A database in WAL mode
// cannot be opened without its -shm file, and a full disk has no room to
// create one: with the files kept, a start on a full disk opens the store
// and serves reads (writes fail with eventstore.ErrStorageFull until there
// is room).
type persistWAL struct{ driver.Connector }

func (p persistWAL) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := p.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	fc, ok := conn.(sqlitedriver.FileControl)
	if !ok {
		return nil, errors.Join(errors.New("eventstore/sqlite: the driver's connection has no file control"), conn.Close())
	}
	if _, err := fc.FileControlPersistWAL("main", 1); err != nil {
		return nil, errors.Join(translate("persist the WAL", err), conn.Close())
	}
	return conn, nil
}
