-- Event payloads are compressed with lz4 instead of pglz when TOAST
-- compresses them (values over about 2 kB: the audit trail's batches and
-- sealed runs are tens to hundreds of kilobytes). pglz cost more server
-- CPU than the rest of such an append (measured under `cairn bench api`:
-- an append of ~1 MB of sealed records took ~27 ms), and every read that
-- fetches the value from the table decompresses it again; lz4 is several
-- times faster both ways. Values stored before keep pglz and read back as
-- they always did. lz4 is optional in PostgreSQL builds (and SET
-- COMPRESSION needs 14): a server without it keeps the default.
DO $$
BEGIN
    ALTER TABLE {schema}.events
        ALTER COLUMN data SET COMPRESSION lz4,
        ALTER COLUMN metadata SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
    RAISE NOTICE 'event payloads keep the default TOAST compression: %', SQLERRM;
END
$$;
