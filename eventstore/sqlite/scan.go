package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

const (
	// Bounds of the per-read caches of eventScanner.
	maxInterned    = 1024
	maxCachedMetas = 256
)

// eventScanner turns rows of eventColumns into RecordedEvents. It is made
// for one read: replay reads thousands of rows per call, so it reuses its
// scan destinations and shares repeated values between events (stream
// names, types and metadata repeat a lot in a log) instead of allocating
// and decoding them row after row.
type eventScanner struct {
	position, revision, version, recordedAt int64

	id, stream, typ, metadata sql.RawBytes
	data                      []byte
	dest                      []any

	strings map[string]string
	metas   map[string]eventstore.Metadata
}

func newEventScanner() *eventScanner {
	sc := &eventScanner{
		strings: make(map[string]string),
		metas:   make(map[string]eventstore.Metadata),
	}
	sc.dest = []any{&sc.position, &sc.id, &sc.stream, &sc.revision, &sc.typ, &sc.version, &sc.data, &sc.metadata, &sc.recordedAt}
	return sc
}

// scanEvents reads every row and closes rows. limit (<= 0: none) sizes the
// result.
func scanEvents(rows *sql.Rows, limit int) (_ []eventstore.RecordedEvent, err error) {
	defer func() {
		err = errors.Join(err, rows.Close())
	}()
	var events []eventstore.RecordedEvent
	sc := newEventScanner()
	for rows.Next() {
		if len(events) == cap(events) {
			events = eventstore.GrowEvents(events, limit)
		}
		if err := rows.Scan(sc.dest...); err != nil {
			return nil, err
		}
		ev, err := sc.event()
		if err != nil {
			return nil, err
		}
		events = append(events, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return events, nil
}

// event builds the event of the row just scanned.
func (sc *eventScanner) event() (eventstore.RecordedEvent, error) {
	ev := eventstore.RecordedEvent{
		Stream:     sc.intern(sc.stream),
		Type:       sc.intern(sc.typ),
		Version:    int(sc.version),
		Revision:   sc.revision,
		Position:   uint64(sc.position),
		RecordedAt: time.UnixMicro(sc.recordedAt).UTC(),
		Data:       sc.data,
	}
	sc.data = nil // the next Scan allocates afresh: ev keeps this one
	if len(sc.id) != len(ev.ID) {
		return ev, fmt.Errorf("event at position %d: id has %d bytes, want %d", sc.position, len(sc.id), len(ev.ID))
	}
	copy(ev.ID[:], sc.id)
	md, err := sc.decodeMetadata(sc.metadata)
	if err != nil {
		return ev, fmt.Errorf("event at position %d: %w", sc.position, err)
	}
	ev.Metadata = md
	return ev, nil
}

// intern returns b as a string, shared with earlier equal values of this
// read.
func (sc *eventScanner) intern(b []byte) string {
	if s, ok := sc.strings[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(sc.strings) < maxInterned {
		sc.strings[s] = s
	}
	return s
}

// decodeMetadata decodes stored metadata (NULL: none), remembering the
// decoded values of this read.
func (sc *eventScanner) decodeMetadata(raw []byte) (eventstore.Metadata, error) {
	if raw == nil {
		return eventstore.Metadata{}, nil
	}
	if md, ok := sc.metas[string(raw)]; ok {
		return md, nil
	}
	md, err := eventstore.DecodeMetadata(raw)
	if err != nil {
		return md, err
	}
	if len(sc.metas) < maxCachedMetas {
		sc.metas[string(raw)] = md
	}
	return md, nil
}
