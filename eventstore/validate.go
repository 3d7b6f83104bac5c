package eventstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Limits enforced on every append, by every backend.
const (
	// DefaultMaxEventSize is the default limit on the size of one event's
	// data plus metadata, in bytes.
	DefaultMaxEventSize = 2 << 20
	// MaxStreamNameLength is the longest stream name accepted, in bytes.
	MaxStreamNameLength = 256
	// MaxTypeLength is the longest event type accepted, in bytes.
	MaxTypeLength = 128
	// MaxEventsPerAppend is the largest number of events one Append takes.
	MaxEventsPerAppend = 65536
)

// PreparedEvent is a validated event with its data normalised and its
// metadata encoded, ready for a backend to write.
type PreparedEvent struct {
	ID           uuid.UUID
	Type         string
	Version      int
	Data         []byte
	MetadataJSON []byte
}

var emptyObject = []byte("{}")

// Prepare validates an append and normalises its events. It is called by
// every backend before anything is written, so every backend rejects the
// same input with the same *InvalidEventError. maxSize <= 0 means
// DefaultMaxEventSize.
func Prepare(stream string, events []EventData, maxSize int) ([]PreparedEvent, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxEventSize
	}
	if err := ValidateStreamName(stream); err != nil {
		return nil, err
	}
	if len(events) > MaxEventsPerAppend {
		return nil, &InvalidEventError{Index: -1, Field: "events", Reason: fmt.Sprintf("%d events in one append, at most %d", len(events), MaxEventsPerAppend)}
	}
	out := make([]PreparedEvent, len(events))
	seen := make(map[uuid.UUID]int, len(events))
	for i, ev := range events {
		if ev.ID == uuid.Nil {
			return nil, &InvalidEventError{Index: i, Field: "id", Reason: "must be set by the writer (eventstore.NewEventID)"}
		}
		if j, dup := seen[ev.ID]; dup {
			return nil, &InvalidEventError{Index: i, Field: "id", Reason: fmt.Sprintf("same id as event %d of this append", j)}
		}
		seen[ev.ID] = i
		if ev.Type == "" {
			return nil, &InvalidEventError{Index: i, Field: "type", Reason: "must not be empty"}
		}
		if len(ev.Type) > MaxTypeLength || !utf8.ValidString(ev.Type) || strings.IndexByte(ev.Type, 0) >= 0 {
			return nil, &InvalidEventError{Index: i, Field: "type", Reason: fmt.Sprintf("must be valid UTF-8 without NUL, of at most %d bytes", MaxTypeLength)}
		}
		if ev.Version < 0 {
			return nil, &InvalidEventError{Index: i, Field: "version", Reason: "must not be negative"}
		}
		version := ev.Version
		if version == 0 {
			version = 1
		}
		data := []byte(ev.Data)
		if len(data) == 0 {
			data = emptyObject
		} else if !validJSON(data) {
			return nil, &InvalidEventError{Index: i, Field: "data", Reason: "is not valid JSON"}
		}
		md, err := json.Marshal(ev.Metadata)
		if err != nil {
			return nil, &InvalidEventError{Index: i, Field: "metadata", Reason: err.Error()}
		}
		if size := len(data) + len(md); size > maxSize {
			return nil, &InvalidEventError{Index: i, Field: "data", Reason: fmt.Sprintf("event is %d bytes, the limit is %d", size, maxSize)}
		}
		out[i] = PreparedEvent{ID: ev.ID, Type: ev.Type, Version: version, Data: data, MetadataJSON: md}
	}
	return out, nil
}

// ValidateStreamName checks a stream name: non-empty, valid UTF-8, at most
// MaxStreamNameLength bytes, no NUL and not starting with '$' (reserved).
func ValidateStreamName(stream string) error {
	switch {
	case stream == "":
		return &InvalidEventError{Index: -1, Field: "stream", Reason: "must not be empty"}
	case len(stream) > MaxStreamNameLength:
		return &InvalidEventError{Index: -1, Field: "stream", Reason: fmt.Sprintf("longer than %d bytes", MaxStreamNameLength)}
	case !utf8.ValidString(stream):
		return &InvalidEventError{Index: -1, Field: "stream", Reason: "must be valid UTF-8"}
	case stream[0] == '$':
		return &InvalidEventError{Index: -1, Field: "stream", Reason: "names starting with '$' are reserved"}
	}
	for i := 0; i < len(stream); i++ {
		if stream[i] == 0 {
			return &InvalidEventError{Index: -1, Field: "stream", Reason: "must not contain NUL"}
		}
	}
	return nil
}

// DecodeMetadata parses stored metadata JSON. Unknown fields are ignored
// (they may come from a newer writer).
func DecodeMetadata(raw []byte) (Metadata, error) {
	var md Metadata
	if len(raw) == 0 {
		return md, nil
	}
	if err := json.Unmarshal(raw, &md); err != nil {
		return Metadata{}, fmt.Errorf("eventstore: decode metadata: %w", err)
	}
	return md, nil
}

// MaxStreamsPerAppend is the largest number of parts one AppendMany takes:
// the PostgreSQL backend holds one lock per stream until it commits, in a
// lock table all the cluster's transactions share.
const MaxStreamsPerAppend = 512

// PreparedAppend is a validated part of an AppendMany.
type PreparedAppend struct {
	Stream   string
	Expected ExpectedRevision
	Events   []PreparedEvent
}

// PrepareMany validates an AppendMany as Prepare validates an Append, part
// by part (an error names the part's stream), and checks the call as a
// whole: at most MaxStreamsPerAppend parts, each stream once, at most
// MaxEventsPerAppend events in all, no event id twice.
func PrepareMany(parts []StreamAppend, maxSize int) ([]PreparedAppend, error) {
	if len(parts) > MaxStreamsPerAppend {
		return nil, &InvalidEventError{Index: -1, Field: "parts", Reason: fmt.Sprintf("%d streams in one append, at most %d", len(parts), MaxStreamsPerAppend)}
	}
	total := 0
	for _, p := range parts {
		total += len(p.Events)
	}
	if total > MaxEventsPerAppend {
		return nil, &InvalidEventError{Index: -1, Field: "events", Reason: fmt.Sprintf("%d events in one append, at most %d", total, MaxEventsPerAppend)}
	}
	out := make([]PreparedAppend, len(parts))
	streams := make(map[string]bool, len(parts))
	ids := make(map[uuid.UUID]string, total)
	for i, p := range parts {
		prepared, err := Prepare(p.Stream, p.Events, maxSize)
		if err != nil {
			var ie *InvalidEventError
			if errors.As(err, &ie) {
				ie.Stream = p.Stream
			}
			return nil, err
		}
		if streams[p.Stream] {
			return nil, &InvalidEventError{Index: -1, Field: "stream", Stream: p.Stream, Reason: "more than one part appends to this stream"}
		}
		streams[p.Stream] = true
		for j, ev := range prepared {
			if other, dup := ids[ev.ID]; dup {
				return nil, &InvalidEventError{Index: j, Field: "id", Stream: p.Stream, Reason: fmt.Sprintf("same id as an event of the part for stream %.64q", other)}
			}
			ids[ev.ID] = p.Stream
		}
		out[i] = PreparedAppend{Stream: p.Stream, Expected: p.Expected, Events: prepared}
	}
	return out, nil
}
