package eventstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// MaxEnvelopeSize is the largest encoded envelope UnmarshalEnvelope accepts:
// an event at DefaultMaxEventSize (data plus metadata) and room for its
// header fields. A bus that carries envelopes must accept messages of this
// size (NATS defaults to 1 MiB).
const MaxEnvelopeSize = DefaultMaxEventSize + 64<<10

// MarshalEnvelope encodes a recorded event as the JSON envelope forwarded on
// the message bus. The field names are those of RecordedEvent's JSON tags;
// data is written byte for byte as stored (encoding/json would compact it),
// recorded_at in UTC with nanoseconds. An event that UnmarshalEnvelope would
// refuse is refused here too, with the same *InvalidEventError.
func MarshalEnvelope(ev RecordedEvent) ([]byte, error) {
	ev.RecordedAt = ev.RecordedAt.UTC()
	if err := validateEnvelope(ev); err != nil {
		return nil, err
	}
	header, err := json.Marshal(envelopeHeader{
		ID:         ev.ID,
		Stream:     ev.Stream,
		Type:       ev.Type,
		Version:    ev.Version,
		Revision:   ev.Revision,
		Position:   ev.Position,
		RecordedAt: ev.RecordedAt.Format(time.RFC3339Nano),
		Metadata:   ev.Metadata,
	})
	if err != nil {
		return nil, &InvalidEventError{Index: -1, Field: "envelope", Reason: err.Error()}
	}
	// header is a JSON object: drop its closing brace and append the data.
	out := make([]byte, 0, len(header)+len(ev.Data)+len(`,"data":}`))
	out = append(out, header[:len(header)-1]...)
	out = append(out, `,"data":`...)
	out = append(out, ev.Data...)
	out = append(out, '}')
	return out, nil
}

// UnmarshalEnvelope decodes an envelope that came from outside the process
// and validates it: id a non-nil UUID, a valid stream name, a non-empty type
// of at most MaxTypeLength bytes, version >= 1, revision present and >= 0,
// position >= 1, recorded_at present (RFC 3339, returned in UTC), data
// present and valid JSON, data plus metadata within DefaultMaxEventSize, and
// the whole input within MaxEnvelopeSize. Unknown fields are ignored, so a
// newer writer can add some. Every error is an *InvalidEventError (Index -1)
// whose Field names the offending field, or "envelope" when the input is not
// a JSON object.
func UnmarshalEnvelope(b []byte) (RecordedEvent, error) {
	if len(b) > MaxEnvelopeSize {
		return RecordedEvent{}, envelopeError("envelope", fmt.Sprintf("is %d bytes, the limit is %d", len(b), MaxEnvelopeSize))
	}
	var w envelopeWire
	if err := json.Unmarshal(b, &w); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return RecordedEvent{}, envelopeError(typeErr.Field, "has the wrong JSON type ("+typeErr.Value+")")
		}
		return RecordedEvent{}, envelopeError("envelope", err.Error())
	}

	var ev RecordedEvent
	if w.ID == nil {
		return RecordedEvent{}, envelopeError("id", "is missing")
	}
	id, err := uuid.Parse(*w.ID)
	if err != nil {
		return RecordedEvent{}, envelopeError("id", "is not a UUID: "+err.Error())
	}
	ev.ID = id
	if w.Stream == nil {
		return RecordedEvent{}, envelopeError("stream", "is missing")
	}
	ev.Stream = *w.Stream
	if w.Type == nil {
		return RecordedEvent{}, envelopeError("type", "is missing")
	}
	ev.Type = *w.Type
	ev.Version = w.Version
	if w.Revision == nil {
		return RecordedEvent{}, envelopeError("revision", "is missing")
	}
	ev.Revision = *w.Revision
	ev.Position = w.Position
	if w.RecordedAt == nil {
		return RecordedEvent{}, envelopeError("recorded_at", "is missing")
	}
	at, err := time.Parse(time.RFC3339Nano, *w.RecordedAt)
	if err != nil {
		return RecordedEvent{}, envelopeError("recorded_at", "is not an RFC 3339 time: "+err.Error())
	}
	ev.RecordedAt = at.UTC()
	ev.Data = w.Data
	ev.Metadata = w.Metadata
	if err := validateEnvelope(ev); err != nil {
		return RecordedEvent{}, err
	}
	return ev, nil
}

// envelopeHeader is every envelope field but data, which MarshalEnvelope
// appends verbatim.
type envelopeHeader struct {
	ID         uuid.UUID `json:"id"`
	Stream     string    `json:"stream"`
	Type       string    `json:"type"`
	Version    int       `json:"version"`
	Revision   int64     `json:"revision"`
	Position   uint64    `json:"position"`
	RecordedAt string    `json:"recorded_at"`
	Metadata   Metadata  `json:"metadata"`
}

// envelopeWire is the decoding side: pointers tell a missing field from a
// zero one where zero would be valid.
type envelopeWire struct {
	ID         *string         `json:"id"`
	Stream     *string         `json:"stream"`
	Type       *string         `json:"type"`
	Version    int             `json:"version"`
	Revision   *int64          `json:"revision"`
	Position   uint64          `json:"position"`
	RecordedAt *string         `json:"recorded_at"`
	Data       json.RawMessage `json:"data"`
	Metadata   Metadata        `json:"metadata"`
}

// validateEnvelope holds the rules both directions share, so that whatever
// UnmarshalEnvelope returns, MarshalEnvelope accepts.
func validateEnvelope(ev RecordedEvent) error {
	if ev.ID == uuid.Nil {
		return envelopeError("id", "must not be the nil UUID")
	}
	if err := ValidateStreamName(ev.Stream); err != nil {
		return err
	}
	switch {
	case ev.Type == "":
		return envelopeError("type", "must not be empty")
	case len(ev.Type) > MaxTypeLength || !utf8.ValidString(ev.Type):
		return envelopeError("type", fmt.Sprintf("must be valid UTF-8 of at most %d bytes", MaxTypeLength))
	case ev.Version < 1:
		return envelopeError("version", "must be at least 1")
	case ev.Revision < 0:
		return envelopeError("revision", "must not be negative")
	case ev.Position < 1:
		return envelopeError("position", "must be at least 1")
	case ev.RecordedAt.IsZero():
		return envelopeError("recorded_at", "must be set")
	case ev.RecordedAt.Year() < 1 || ev.RecordedAt.Year() > 9999:
		// Outside what RFC 3339 (and time.Time's JSON form) can write.
		return envelopeError("recorded_at", "year must be within 1..9999 in UTC")
	case len(ev.Data) == 0:
		return envelopeError("data", "is missing")
	case !validJSON(ev.Data):
		return envelopeError("data", "is not valid JSON")
	}
	md, err := json.Marshal(ev.Metadata)
	if err != nil {
		return envelopeError("metadata", err.Error())
	}
	if size := len(ev.Data) + len(md); size > DefaultMaxEventSize {
		return envelopeError("data", fmt.Sprintf("event is %d bytes, the limit is %d", size, DefaultMaxEventSize))
	}
	return nil
}

func envelopeError(field, reason string) *InvalidEventError {
	return &InvalidEventError{Index: -1, Field: field, Reason: reason}
}
