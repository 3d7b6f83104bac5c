package postgres

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/cairnhq/cairn/eventstore"
)

// eventColumns is the column list of every event query, in the order the
// decoder reads them.
const eventColumns = `position, revision, recorded_at, id, version, stream, type, data, metadata`

const (
	colPosition = iota
	colRevision
	colRecordedAt
	colID
	colVersion
	colStream
	colType
	colData
	colMetadata
	numColumns
)

// columnOIDs are the PostgreSQL types of eventColumns.
var columnOIDs = [numColumns]uint32{
	pgtype.Int8OID, pgtype.Int8OID, pgtype.TimestamptzOID, pgtype.UUIDOID, pgtype.Int4OID,
	pgtype.TextOID, pgtype.TextOID, pgtype.ByteaOID, pgtype.ByteaOID,
}

// collect reads rows of eventColumns into events and closes rows.
//
// Replays read hundreds of thousands of events per second, so the common
// case skips pgx's per-column scan plans: when every fixed-width column
// arrives in binary format (pgx's extended protocol asks for it), the raw
// values are decoded here directly; the variable-length ones are copied into
// one shared buffer per read, repeated stream and type names share one
// string, and each distinct metadata document is decoded once. Any other
// format (e.g. the simple protocol) goes through rows.Scan.
//
// The result grows as rows come (eventstore.GrowEvents): nothing is
// allocated for a read that finds nothing, which is what most polls of a
// subscription at the head do. (Allocating room for the whole limit up
// front cost each such poll ~100 kB, the largest allocation of the API
// benchmark with the audit trail on.)
func collect(rows pgx.Rows, limit int) ([]eventstore.RecordedEvent, error) {
	defer rows.Close()
	var out []eventstore.RecordedEvent
	var d *decoder
	for rows.Next() {
		if len(out) == cap(out) {
			out = eventstore.GrowEvents(out, limit)
		}
		if d == nil {
			d = newDecoder(rows.FieldDescriptions())
		}
		var ev eventstore.RecordedEvent
		var err error
		if d.binary {
			err = d.decodeRaw(rows.RawValues(), &ev)
		} else {
			err = d.scan(rows, &ev)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

type decoder struct {
	// binary: every fixed-width and bytea column is in binary format.
	binary bool
	// buf holds the bytes of Data of the events decoded so far; a value
	// that does not fit starts a new buffer (old ones live as long as their
	// events).
	buf     []byte
	strings map[string]string
	mds     map[string]eventstore.Metadata
}

const (
	bufSize           = 64 << 10
	maxInterned       = 4096
	maxCachedMetadata = 256
)

func newDecoder(fds []pgconn.FieldDescription) *decoder {
	d := &decoder{
		strings: make(map[string]string),
		mds:     make(map[string]eventstore.Metadata),
		binary:  len(fds) == numColumns,
	}
	for i := 0; d.binary && i < numColumns; i++ {
		// text arrives as the same bytes in either format.
		d.binary = fds[i].DataTypeOID == columnOIDs[i] &&
			(fds[i].Format == pgtype.BinaryFormatCode || columnOIDs[i] == pgtype.TextOID)
	}
	return d
}

// pgEpochUnix is 2000-01-01T00:00:00Z, PostgreSQL's timestamp epoch, in Unix
// seconds.
const pgEpochUnix = 946_684_800

func (d *decoder) decodeRaw(vals [][]byte, ev *eventstore.RecordedEvent) error {
	if len(vals) != numColumns {
		return fmt.Errorf("event row has %d columns, want %d", len(vals), numColumns)
	}
	for i, want := range [...]int{colPosition: 8, colRevision: 8, colRecordedAt: 8, colID: 16, colVersion: 4} {
		if len(vals[i]) != want {
			return fmt.Errorf("event row: column %d is %d bytes, want %d", i, len(vals[i]), want)
		}
	}
	ev.Position = binary.BigEndian.Uint64(vals[colPosition])
	ev.Revision = int64(binary.BigEndian.Uint64(vals[colRevision]))
	us := int64(binary.BigEndian.Uint64(vals[colRecordedAt]))
	sec, rem := us/1_000_000, us%1_000_000
	if rem < 0 {
		sec, rem = sec-1, rem+1_000_000
	}
	ev.RecordedAt = time.Unix(pgEpochUnix+sec, rem*1000).UTC()
	ev.ID = [16]byte(vals[colID])
	ev.Version = int(int32(binary.BigEndian.Uint32(vals[colVersion])))
	ev.Stream = d.intern(vals[colStream])
	ev.Type = d.intern(vals[colType])
	ev.Data = d.copyBytes(vals[colData])
	md, err := d.metadata(vals[colMetadata])
	if err != nil {
		return fmt.Errorf("event at position %d: %w", ev.Position, err)
	}
	ev.Metadata = md
	return nil
}

func (d *decoder) scan(rows pgx.Rows, ev *eventstore.RecordedEvent) error {
	var (
		position   int64
		recordedAt time.Time
		id         [16]byte
		version    int32
		metadata   []byte
	)
	if err := rows.Scan(&position, &ev.Revision, &recordedAt, &id, &version, &ev.Stream, &ev.Type, &ev.Data, &metadata); err != nil {
		return err
	}
	ev.Position = uint64(position)
	ev.RecordedAt = recordedAt.UTC()
	ev.ID = id
	ev.Version = int(version)
	md, err := d.metadata(metadata)
	if err != nil {
		return fmt.Errorf("event at position %d: %w", position, err)
	}
	ev.Metadata = md
	return nil
}

// intern returns b as a string, sharing one string per distinct value.
func (d *decoder) intern(b []byte) string {
	if s, ok := d.strings[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.strings) < maxInterned {
		d.strings[s] = s
	}
	return s
}

// copyBytes copies b into the shared buffer. The result's capacity is its
// length, so appending to it never writes into another event's bytes.
func (d *decoder) copyBytes(b []byte) []byte {
	if len(b) > cap(d.buf)-len(d.buf) {
		d.buf = make([]byte, 0, max(bufSize, len(b)))
	}
	start := len(d.buf)
	d.buf = append(d.buf, b...)
	return d.buf[start:len(d.buf):len(d.buf)]
}

// metadata decodes raw once per distinct document.
func (d *decoder) metadata(raw []byte) (eventstore.Metadata, error) {
	if md, ok := d.mds[string(raw)]; ok {
		return md, nil
	}
	md, err := eventstore.DecodeMetadata(raw)
	if err != nil {
		return eventstore.Metadata{}, err
	}
	if len(d.mds) < maxCachedMetadata {
		d.mds[string(raw)] = md
	}
	return md, nil
}
