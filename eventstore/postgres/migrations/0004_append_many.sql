-- append_many makes several appends, to distinct streams, in one transaction:
-- all of them or none (eventstore.Store.AppendMany). The parts are given as
-- p_streams and p_expected (one element per part) and the events as parallel
-- arrays, p_parts naming each event's part (1-based); each part's events are
-- in order. It returns one row per part, in order, with the statuses of
-- append_events (0001):
--
--   0 written (or, for a part of no events, checked): out_revision and
--     out_position are those of its last event (no events: the current
--     revision and position 0)
--   1 the part repeats an append already stored (idempotent retry): its
--     original result; nothing written for it
--   2, 3, 4 the part is refused (wrong expected revision; id stored in another
--     stream; partial retry): nothing of the call is written, and the parts
--     after the first refused one are not checked (status 0, no result)
--   5 precondition violated (first row only): as append_events
--
-- Ordering argument (see the package documentation): the streams' locks are
-- all taken before the transaction gets an xid, in the order of their keys,
-- so two calls never wait for each other in a cycle and every stream's
-- previous appender has committed before this one's xid is assigned. Every
-- event of the call gets the same xid, and position xid * 2^20 + its index
-- in the call: the call's events are contiguous in the log, in order.
--
-- Like append_events it must be the only statement of its transaction. It
-- raises a unique violation of events_id_key when an id is already stored
-- in a part whose expectation holds (the client then asks stored_ids_status
-- per part).
CREATE FUNCTION {schema}.append_many(
    p_streams  text[],
    p_expected bigint[],
    p_parts    int[],
    p_ids      uuid[],
    p_types    text[],
    p_versions int[],
    p_data     bytea[],
    p_metadata bytea[])
RETURNS TABLE (out_status int, out_revision bigint, out_position bigint, out_conflict_id uuid)
LANGUAGE plpgsql AS $fn$
DECLARE
    n        int := coalesce(cardinality(p_streams), 0);
    heads    bigint[];
    counts   int[];
    lasts    bigint[];
    statuses int[];
    revs     bigint[];
    poss     bigint[];
    confl    uuid[];
    skip     boolean[];
    refused  boolean := false;
    k        bigint;
    i        int;
    ids      uuid[];
    st       int;
    st_rev   bigint;
    st_pos   bigint;
    st_id    uuid;
    base     bigint;
    at       timestamptz;
BEGIN
    IF n = 0 THEN
        RETURN;
    END IF;
    IF pg_current_xact_id_if_assigned() IS NOT NULL
       OR current_setting('transaction_isolation') <> 'read committed' THEN
        RETURN QUERY SELECT 5, NULL::bigint, NULL::bigint, NULL::uuid;
        RETURN;
    END IF;
    FOR k IN SELECT DISTINCT hashtextextended(s.stream, 0) FROM unnest(p_streams) AS s(stream) ORDER BY 1 LOOP
        PERFORM pg_advisory_xact_lock(k);
    END LOOP;

    -- Under the locks (a fresh snapshot: VOLATILE, READ COMMITTED): each
    -- part's head, event count and last event's index in the call.
    SELECT array_agg(coalesce(h.head, -1) ORDER BY u.ord),
           array_agg(coalesce(c.cnt, 0) ORDER BY u.ord),
           array_agg(coalesce(c.last, 0) ORDER BY u.ord)
      INTO heads, counts, lasts
      FROM unnest(p_streams) WITH ORDINALITY AS u(stream, ord)
      LEFT JOIN LATERAL (SELECT max(x.revision) AS head
                           FROM {schema}.events x WHERE x.stream = u.stream) h ON true
      LEFT JOIN (SELECT e.part, count(*)::int AS cnt, max(e.ord) AS last
                   FROM unnest(p_parts) WITH ORDINALITY AS e(part, ord)
                  GROUP BY e.part) c ON c.part = u.ord;

    statuses := array_fill(0, ARRAY[n]);
    revs := array_fill(NULL::bigint, ARRAY[n]);
    poss := array_fill(0::bigint, ARRAY[n]);
    confl := array_fill(NULL::uuid, ARRAY[n]);
    skip := array_fill(false, ARRAY[n]);
    FOR i IN 1..n LOOP
        IF {schema}.expected_ok(p_expected[i], heads[i]) THEN
            revs[i] := heads[i] + counts[i];
            CONTINUE;
        END IF;
        -- Refused by the expectation. A retry of an append that succeeded is
        -- refused that way too, so look at the ids first.
        IF counts[i] > 0 THEN
            SELECT array_agg(e.id ORDER BY e.ord) INTO ids
              FROM unnest(p_parts, p_ids) WITH ORDINALITY AS e(part, id, ord)
             WHERE e.part = i;
            SELECT s.out_status, s.out_revision, s.out_position, s.out_conflict_id
              INTO st, st_rev, st_pos, st_id
              FROM {schema}.stored_ids_status(p_streams[i], ids) s;
            IF st = 1 THEN
                statuses[i] := 1;
                revs[i] := st_rev;
                poss[i] := st_pos;
                skip[i] := true;
                CONTINUE;
            ELSIF st <> 0 THEN
                statuses[i] := st;
                confl[i] := st_id;
                refused := true;
                EXIT;
            END IF;
        END IF;
        statuses[i] := 2;
        revs[i] := heads[i];
        refused := true;
        EXIT;
    END LOOP;

    IF NOT refused THEN
        -- The first inserted row assigns the xid, after every lock is held.
        base := pg_current_xact_id()::text::bigint * 1048576;  -- 2^20
        at := clock_timestamp();
        INSERT INTO {schema}.events
               (position, tx_id, revision, recorded_at, id, version, stream, type, data, metadata)
        SELECT base + e.ord - 1, pg_current_xact_id(),
               heads[e.part] + row_number() OVER (PARTITION BY e.part ORDER BY e.ord), at,
               e.id, e.version, p_streams[e.part], e.type, e.data, e.metadata
          FROM unnest(p_parts, p_ids, p_types, p_versions, p_data, p_metadata)
               WITH ORDINALITY AS e(part, id, type, version, data, metadata, ord)
         WHERE NOT skip[e.part];
        FOR i IN 1..n LOOP
            IF counts[i] > 0 AND NOT skip[i] THEN
                poss[i] := base + lasts[i] - 1;
            END IF;
        END LOOP;
    END IF;
    RETURN QUERY SELECT * FROM unnest(statuses, revs, poss, confl);
END
$fn$;
