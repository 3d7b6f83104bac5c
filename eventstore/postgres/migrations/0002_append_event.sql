-- append_event is append_events for the common case of one event, with
-- scalar parameters: no arrays to build, send and unnest on the hot path.
-- Same contract, statuses and preconditions as append_events (0001).
CREATE FUNCTION {schema}.append_event(
    p_stream   text,
    p_expected bigint,
    p_id       uuid,
    p_type     text,
    p_version  int,
    p_data     bytea,
    p_metadata bytea,
    OUT out_status      int,
    OUT out_revision    bigint,
    OUT out_position    bigint,
    OUT out_conflict_id uuid)
LANGUAGE plpgsql AS $fn$
BEGIN
    out_position := 0;
    -- The xid must be assigned after the stream lock is held (see the
    -- package documentation); taking an advisory lock assigns none.
    IF pg_current_xact_id_if_assigned() IS NOT NULL
       OR current_setting('transaction_isolation') <> 'read committed' THEN
        out_status := 5;
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended(p_stream, 0));

    INSERT INTO {schema}.events AS e
           (position, tx_id, revision, recorded_at, id, version, stream, type, data, metadata)
    SELECT pg_current_xact_id()::text::bigint * 1048576, pg_current_xact_id(), h.head + 1,
           clock_timestamp(), p_id, p_version, p_stream, p_type, p_data, p_metadata
      FROM (SELECT coalesce(max(x.revision), -1) AS head
              FROM {schema}.events x WHERE x.stream = p_stream) h
     WHERE {schema}.expected_ok(p_expected, h.head)
    RETURNING e.revision, e.position INTO out_revision, out_position;
    IF FOUND THEN
        out_status := 0;
        RETURN;
    END IF;

    -- Refused by the expectation: a retry of an append that succeeded is
    -- refused that way too, so look at the id first.
    SELECT s.out_status, s.out_revision, s.out_position, s.out_conflict_id
      INTO out_status, out_revision, out_position, out_conflict_id
      FROM {schema}.stored_ids_status(p_stream, ARRAY[p_id]) s;
    IF out_status <> 0 THEN
        RETURN;
    END IF;
    out_status := 2;
    SELECT coalesce(max(x.revision), -1) INTO out_revision
      FROM {schema}.events x WHERE x.stream = p_stream;
END
$fn$;
