-- Leases with epochs, and appends fenced by them (eventstore.Fence).
--
-- A lease (infra/lease) is one row: who holds it, the epoch at which they
-- took it (incremented by every takeover) and when it expires, on the
-- database's clock. A leader's appends carry (lease, epoch); the *_fenced
-- functions below append only if the lease is still at that epoch, in the
-- same transaction, so a deposed leader's late append (a process paused
-- past its lease, then resumed) is refused and writes nothing (status 6).
--
-- Why the check cannot race a takeover: every lease has an advisory lock
-- (lease_lock_key). A fenced append holds it SHARED from before it reads
-- the epoch until it commits; a takeover holds it EXCLUSIVE while it
-- increments the epoch, until it commits. So a takeover waits for the
-- fenced appends in flight to commit (they are in the log before the new
-- epoch exists), and an append that comes later waits for the takeover's
-- commit and then reads the new epoch (READ COMMITTED: a fresh snapshot
-- per statement, taken after the lock is granted; PostgreSQL makes a
-- commit visible before it releases the committer's locks). Fenced
-- appends never wait for each other (shared), and renewals take no lock.
-- Advisory locks assign no transaction id, so the append functions'
-- precondition (no xid before the stream locks) still holds.
CREATE TABLE {schema}.leases (
    name        text        PRIMARY KEY,
    holder      text        NOT NULL,
    epoch       bigint      NOT NULL,
    acquired_at timestamptz NOT NULL,
    renewed_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL
);

-- lease_lock_key is the advisory lock of lease p_name in this schema.
CREATE FUNCTION {schema}.lease_lock_key(p_name text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT hashtextextended('cairn.lease/{schema}/' || p_name, 0)
$fn$;

-- lease_fence takes lease p_name's lock shared (held to commit) and returns
-- its epoch (0 when the lease was never taken).
CREATE FUNCTION {schema}.lease_fence(p_name text) RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
    v_epoch bigint;
BEGIN
    PERFORM pg_advisory_xact_lock_shared({schema}.lease_lock_key(p_name));
    -- A statement of its own: its snapshot is taken after the lock.
    SELECT l.epoch INTO v_epoch FROM {schema}.leases l WHERE l.name = p_name;
    RETURN coalesce(v_epoch, 0);
END
$fn$;

-- lease_acquire gives lease p_name to p_holder for p_ttl (epoch + 1) when
-- it is free, expired on the database's clock, or p_holder's already (a
-- holder asks only when it does not lead: an earlier call of its own may
-- have taken the lease without the answer reaching it; a new epoch fences
-- whatever that term would have written). Otherwise it leaves it. It
-- returns whether p_holder got it, the lease's holder, epoch and expiry
-- after the call, and the database's clock then (a follower waits for
-- that expiry, not for its own clock).
CREATE FUNCTION {schema}.lease_acquire(p_name text, p_holder text, p_ttl interval)
RETURNS TABLE (out_acquired boolean, out_holder text, out_epoch bigint, out_expires_at timestamptz, out_now timestamptz)
LANGUAGE plpgsql AS $fn$
DECLARE
    v_now timestamptz;
BEGIN
    -- A live lease is left without taking its lock, so that followers
    -- polling it never hold up its leader's fenced appends.
    RETURN QUERY SELECT false, l.holder, l.epoch, l.expires_at, clock_timestamp() FROM {schema}.leases l
                  WHERE l.name = p_name AND l.expires_at > clock_timestamp() AND l.holder <> p_holder;
    IF FOUND THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock({schema}.lease_lock_key(p_name));
    v_now := clock_timestamp();
    RETURN QUERY
    INSERT INTO {schema}.leases AS l (name, holder, epoch, acquired_at, renewed_at, expires_at)
    VALUES (p_name, p_holder, 1, v_now, v_now, v_now + p_ttl)
    ON CONFLICT (name) DO UPDATE
       SET holder = excluded.holder, epoch = l.epoch + 1, acquired_at = excluded.acquired_at,
           renewed_at = excluded.renewed_at, expires_at = excluded.expires_at
     WHERE l.expires_at <= v_now OR l.holder = p_holder
    RETURNING true, l.holder, l.epoch, l.expires_at, v_now;
    IF FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT false, l.holder, l.epoch, l.expires_at, clock_timestamp() FROM {schema}.leases l WHERE l.name = p_name;
END
$fn$;

-- lease_renew extends lease p_name by p_ttl from now if p_holder still
-- holds it at p_epoch (even past its expiry, when nobody took it: the
-- epoch, not the clock, decides whose writes pass). It returns the new
-- expiry, or NULL when the lease is someone else's.
CREATE FUNCTION {schema}.lease_renew(p_name text, p_holder text, p_epoch bigint, p_ttl interval)
RETURNS timestamptz
LANGUAGE sql AS $fn$
    UPDATE {schema}.leases l
       SET renewed_at = clock_timestamp(), expires_at = clock_timestamp() + p_ttl
     WHERE l.name = p_name AND l.holder = p_holder AND l.epoch = p_epoch
    RETURNING l.expires_at
$fn$;

-- lease_release lets lease p_name expire now if p_holder holds it at
-- p_epoch, so that a follower takes it at its next try.
CREATE FUNCTION {schema}.lease_release(p_name text, p_holder text, p_epoch bigint)
RETURNS boolean
LANGUAGE sql AS $fn$
    WITH r AS (
        UPDATE {schema}.leases l SET expires_at = least(l.expires_at, clock_timestamp())
         WHERE l.name = p_name AND l.holder = p_holder AND l.epoch = p_epoch
        RETURNING 1)
    SELECT EXISTS (SELECT 1 FROM r)
$fn$;

-- The fenced appends: append_event_packed, append_events and append_many
-- preceded by the fence. A stale epoch returns status 6 with the lease's
-- current epoch in place of the revision, and writes nothing. The
-- precondition (status 5) is checked first, as the wrapped functions do,
-- since the fence's lock must not be taken inside a transaction that
-- already wrote either.
CREATE FUNCTION {schema}.append_event_packed_fenced(
    p_lease    text,
    p_epoch    bigint,
    p_stream   text,
    p_expected bigint,
    p_id       uuid,
    p_type     text,
    p_version  int,
    p_data     bytea,
    p_metadata bytea)
RETURNS bigint[]
LANGUAGE plpgsql AS $fn$
DECLARE
    v_epoch bigint;
BEGIN
    IF pg_current_xact_id_if_assigned() IS NOT NULL
       OR current_setting('transaction_isolation') <> 'read committed' THEN
        RETURN ARRAY[5, -1, 0];
    END IF;
    v_epoch := {schema}.lease_fence(p_lease);
    IF v_epoch <> p_epoch THEN
        RETURN ARRAY[6, v_epoch, 0];
    END IF;
    RETURN {schema}.append_event_packed(p_stream, p_expected, p_id, p_type, p_version, p_data, p_metadata);
END
$fn$;

CREATE FUNCTION {schema}.append_events_fenced(
    p_lease    text,
    p_epoch    bigint,
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
    v_epoch bigint;
BEGIN
    IF pg_current_xact_id_if_assigned() IS NOT NULL
       OR current_setting('transaction_isolation') <> 'read committed' THEN
        out_status := 5;
        RETURN;
    END IF;
    v_epoch := {schema}.lease_fence(p_lease);
    IF v_epoch <> p_epoch THEN
        out_status := 6;
        out_revision := v_epoch;
        RETURN;
    END IF;
    SELECT a.out_status, a.out_revision, a.out_position, a.out_conflict_id
      INTO out_status, out_revision, out_position, out_conflict_id
      FROM {schema}.append_events(p_stream, p_expected, p_ids, p_types, p_versions, p_data, p_metadata) a;
END
$fn$;

CREATE FUNCTION {schema}.append_many_fenced(
    p_lease    text,
    p_epoch    bigint,
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
    v_epoch bigint;
BEGIN
    IF coalesce(cardinality(p_streams), 0) = 0 THEN
        RETURN;
    END IF;
    IF pg_current_xact_id_if_assigned() IS NOT NULL
       OR current_setting('transaction_isolation') <> 'read committed' THEN
        RETURN QUERY SELECT 5, NULL::bigint, NULL::bigint, NULL::uuid;
        RETURN;
    END IF;
    v_epoch := {schema}.lease_fence(p_lease);
    IF v_epoch <> p_epoch THEN
        RETURN QUERY SELECT 6, v_epoch, NULL::bigint, NULL::uuid;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM {schema}.append_many(p_streams, p_expected, p_parts, p_ids, p_types, p_versions, p_data, p_metadata);
END
$fn$;
