-- The event log and the append function. {schema} is replaced by the quoted
-- schema name when the migration runs; every name is qualified with it, so
-- nothing depends on a connection's search_path.
--
-- position = xid * 2^20 + index within the append: see the package
-- documentation (eventstore/postgres/doc.go) for why this order, read below
-- the snapshot's xmin, never lets a reader skip an event.

CREATE TABLE {schema}.events (
    position    bigint      NOT NULL,
    tx_id       xid8        NOT NULL,
    revision    bigint      NOT NULL CHECK (revision >= 0),
    recorded_at timestamptz NOT NULL,
    id          uuid        NOT NULL,
    version     int         NOT NULL CHECK (version >= 1),
    stream      text        NOT NULL,
    type        text        NOT NULL,
    -- bytea, not json/jsonb: the writer's bytes come back exactly (jsonb
    -- reorders keys; json rejects what the database encoding cannot hold).
    -- Query with convert_from(data, 'UTF8')::jsonb.
    data        bytea       NOT NULL,
    metadata    bytea       NOT NULL,
    CONSTRAINT events_pkey PRIMARY KEY (position),
    CONSTRAINT events_stream_revision_key UNIQUE (stream, revision),
    CONSTRAINT events_id_key UNIQUE (id)
);

-- expected_ok says whether a stream whose last revision is p_head (-1: no
-- events) satisfies the expectation p_expected (-1 any, -2 no stream, -3
-- stream exists, >= 0 exact revision). Inlined where it is used.
CREATE FUNCTION {schema}.expected_ok(p_expected bigint, p_head bigint) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT p_expected = -1 OR p_expected = p_head
        OR (p_expected = -2 AND p_head < 0)
        OR (p_expected = -3 AND p_head >= 0)
$fn$;

-- stored_ids_status classifies an append to p_stream whose ids may already
-- be stored:
--
--   0 none of the ids is stored
--   1 an idempotent retry: the ids are stored at consecutive revisions of
--     p_stream in this order; out_revision and out_position are those of the
--     last one
--   3 out_conflict_id is stored in another stream
--   4 ids are stored in p_stream, but not as this append (a partial or
--     reordered retry); out_conflict_id is one that does not fit
--
-- Stored events never change, so the answer does not need the stream lock.
CREATE FUNCTION {schema}.stored_ids_status(
    p_stream text,
    p_ids    uuid[],
    OUT out_status      int,
    OUT out_revision    bigint,
    OUT out_position    bigint,
    OUT out_conflict_id uuid)
LANGUAGE plpgsql AS $fn$
DECLARE
    found_in  text;
    found_rev bigint;
    mismatch  bigint;
BEGIN
    out_status := 0;
    out_position := 0;
    SELECT e.stream, e.revision INTO found_in, found_rev
      FROM {schema}.events e WHERE e.id = p_ids[1];
    IF NOT FOUND THEN
        -- Not a retry; a later id may still be stored.
        SELECT u.id, e.stream INTO out_conflict_id, found_in
          FROM unnest(p_ids) WITH ORDINALITY AS u(id, ord)
          JOIN {schema}.events e ON e.id = u.id
         ORDER BY u.ord
         LIMIT 1;
        IF FOUND THEN
            out_status := CASE WHEN found_in = p_stream THEN 4 ELSE 3 END;
        END IF;
        RETURN;
    END IF;
    IF found_in <> p_stream THEN
        out_status := 3;
        out_conflict_id := p_ids[1];
        RETURN;
    END IF;
    SELECT min(u.ord) INTO mismatch
      FROM unnest(p_ids) WITH ORDINALITY AS u(id, ord)
      LEFT JOIN {schema}.events e
        ON e.stream = p_stream AND e.revision = found_rev + u.ord - 1
     WHERE e.id IS DISTINCT FROM u.id;
    IF mismatch IS NOT NULL THEN
        out_status := 4;
        out_conflict_id := p_ids[mismatch];
        RETURN;
    END IF;
    out_status := 1;
    out_revision := found_rev + cardinality(p_ids) - 1;
    SELECT e.position INTO out_position
      FROM {schema}.events e
     WHERE e.stream = p_stream AND e.revision = out_revision;
END
$fn$;

-- append_events appends the events given as parallel arrays to p_stream, all
-- or none, if the stream satisfies p_expected (see expected_ok). It must be
-- the only statement of its transaction (the client runs it in autocommit)
-- and reports refusals as a status instead of raising:
--
--   0 appended: out_revision and out_position are those of the last event
--     (for zero events: the current revision and position 0)
--   1, 3, 4 the ids are already stored (see stored_ids_status); nothing
--     written
--   2 wrong expected revision: out_revision is the stream's revision (-1 when
--     it has no events)
--   5 precondition violated: the transaction already had an xid, or is not
--     READ COMMITTED, so per-stream order could not be guaranteed
--
-- The hot path is one lock and one statement. It raises a unique violation
-- of events_id_key when an id is already stored and the expectation holds
-- (the client then asks stored_ids_status), and "bigint out of range" once
-- transaction ids no longer fit in a position (2^43 of them).
--
-- VOLATILE (the default) on purpose: under READ COMMITTED every statement
-- below takes a fresh snapshot, so what it reads after the lock includes the
-- previous holder's commit.
CREATE FUNCTION {schema}.append_events(
    p_stream   text,
    p_expected bigint,
    p_ids      uuid[],
    p_types    text[],
    p_versions int[],
    p_data     bytea[],
    p_metadata bytea[],
    OUT out_status      int,
    OUT out_revision    bigint,
    OUT out_position    bigint,
    OUT out_conflict_id uuid)
LANGUAGE plpgsql AS $fn$
DECLARE
    n    int := coalesce(cardinality(p_ids), 0);
    head bigint;
    base bigint;
    at   timestamptz;
BEGIN
    out_position := 0;
    IF n = 0 THEN
        -- Only check the expectation: no lock, nothing written.
        SELECT coalesce(max(e.revision), -1) INTO out_revision
          FROM {schema}.events e WHERE e.stream = p_stream;
        out_status := CASE WHEN {schema}.expected_ok(p_expected, out_revision) THEN 0 ELSE 2 END;
        RETURN;
    END IF;

    -- The xid must be assigned after the stream lock is held (see the
    -- package documentation); taking an advisory lock assigns none.
    IF pg_current_xact_id_if_assigned() IS NOT NULL
       OR current_setting('transaction_isolation') <> 'read committed' THEN
        out_status := 5;
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended(p_stream, 0));

    -- Read the head, check, insert. The first inserted row assigns the xid.
    IF n = 1 THEN
        -- The common case in one statement.
        INSERT INTO {schema}.events AS e
               (position, tx_id, revision, recorded_at, id, version, stream, type, data, metadata)
        SELECT pg_current_xact_id()::text::bigint * 1048576, pg_current_xact_id(), h.head + 1,
               clock_timestamp(), p_ids[1], p_versions[1], p_stream, p_types[1], p_data[1], p_metadata[1]
          FROM (SELECT coalesce(max(x.revision), -1) AS head
                  FROM {schema}.events x WHERE x.stream = p_stream) h
         WHERE {schema}.expected_ok(p_expected, h.head)
        RETURNING e.revision, e.position INTO out_revision, out_position;
        IF FOUND THEN
            out_status := 0;
            RETURN;
        END IF;
    ELSE
        SELECT coalesce(max(x.revision), -1) INTO head
          FROM {schema}.events x WHERE x.stream = p_stream;
        IF {schema}.expected_ok(p_expected, head) THEN
            base := pg_current_xact_id()::text::bigint * 1048576;  -- 2^20
            at := clock_timestamp();
            INSERT INTO {schema}.events
                   (position, tx_id, revision, recorded_at, id, version, stream, type, data, metadata)
            SELECT base + u.ord - 1, pg_current_xact_id(), head + u.ord, at,
                   u.id, u.version, p_stream, u.type, u.data, u.metadata
              FROM unnest(p_ids, p_types, p_versions, p_data, p_metadata)
                   WITH ORDINALITY AS u(id, type, version, data, metadata, ord);
            out_status := 0;
            out_revision := head + n;
            out_position := base + n - 1;
            RETURN;
        END IF;
    END IF;

    -- Refused by the expectation. A retry of an append that succeeded is
    -- refused that way too, so look at the ids first.
    SELECT s.out_status, s.out_revision, s.out_position, s.out_conflict_id
      INTO out_status, out_revision, out_position, out_conflict_id
      FROM {schema}.stored_ids_status(p_stream, p_ids) s;
    IF out_status <> 0 THEN
        RETURN;
    END IF;
    out_status := 2;
    SELECT coalesce(max(x.revision), -1) INTO out_revision
      FROM {schema}.events x WHERE x.stream = p_stream;
END
$fn$;
