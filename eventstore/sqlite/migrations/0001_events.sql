-- The event log. position is the rowid: dense, from 1, in commit order
-- (one writer assigns it). id is the event's UUID as 16 bytes. data holds
-- the JSON payload byte for byte; metadata is NULL when every field is
-- empty. recorded_at is the commit time in Unix microseconds (one value per
-- transaction). data and metadata are BLOBs so that their bytes come back
-- exactly as written; in ad-hoc SQL read them with CAST(data AS TEXT), as
-- SQLite's JSON functions take a BLOB for binary JSONB.
CREATE TABLE events (
    position    INTEGER PRIMARY KEY,
    id          BLOB    NOT NULL UNIQUE CHECK (length(id) = 16),
    stream      TEXT    NOT NULL,
    revision    INTEGER NOT NULL CHECK (revision >= 0),
    type        TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    data        BLOB    NOT NULL,
    metadata    BLOB,
    recorded_at INTEGER NOT NULL,
    UNIQUE (stream, revision)
) STRICT;
