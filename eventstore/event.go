package eventstore

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Metadata says who caused an event and why. Fields are append-only: new
// ones may be added, none renamed or removed.
type Metadata struct {
	// Actor is the user (id or email) on whose authority the change was made.
	Actor string `json:"actor,omitempty"`
	// AccessKey is the keypair the request was signed with, if any.
	AccessKey string `json:"access_key,omitempty"`
	// ActingAs is the user an admin acted on behalf of, if any.
	ActingAs string `json:"acting_as,omitempty"`
	// RequestID correlates every event caused by one request.
	RequestID string `json:"request_id,omitempty"`
	// CausationID is the id of the event or command that caused this one.
	CausationID string `json:"causation_id,omitempty"`
	// ClientIP is the address the request came from.
	ClientIP string `json:"client_ip,omitempty"`
}

// IsZero reports whether no metadata field is set.
func (m Metadata) IsZero() bool { return m == Metadata{} }

// EventData is an event as a writer proposes it to Append.
type EventData struct {
	// ID identifies the event. It is set once by the writer (a UUIDv7, see
	// NewEvent) and kept across retries: re-appending the same ids to the same
	// stream is a no-op. The zero UUID is rejected.
	ID uuid.UUID
	// Type is the stable wire name of the event, e.g. "session.requested".
	// It is never derived from a Go type name.
	Type string
	// Version is the schema version of Data for this Type (>= 1; 0 is
	// stored as 1).
	Version int
	// Data is the JSON payload. Empty data is stored as {}.
	Data json.RawMessage
	// Metadata is who and what caused the event.
	Metadata Metadata
}

// NewEvent builds an EventData with a fresh UUIDv7, schema version 1 and
// data marshalled to JSON.
func NewEvent(eventType string, data any, md Metadata) (EventData, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return EventData{}, &InvalidEventError{Index: -1, Field: "data", Reason: err.Error()}
	}
	return EventData{ID: NewEventID(), Type: eventType, Version: 1, Data: raw, Metadata: md}, nil
}

// NewEventID returns a fresh UUIDv7 (time-ordered) event id.
func NewEventID() uuid.UUID {
	id, err := uuid.NewV7()
	if err != nil {
		// NewV7 only fails when the system's random source fails; a v4 is
		// still a unique id.
		return uuid.New()
	}
	return id
}

// RecordedEvent is an event as the store returns it.
type RecordedEvent struct {
	ID         uuid.UUID       `json:"id"`
	Stream     string          `json:"stream"`
	Type       string          `json:"type"`
	Version    int             `json:"version"`
	Revision   int64           `json:"revision"`
	Position   uint64          `json:"position"`
	RecordedAt time.Time       `json:"recorded_at"`
	Data       json.RawMessage `json:"data"`
	Metadata   Metadata        `json:"metadata"`
}

// Decode unmarshals the event's data into v.
func (e RecordedEvent) Decode(v any) error {
	if err := json.Unmarshal(e.Data, v); err != nil {
		return &InvalidEventError{Index: -1, Field: "data", Reason: "decode " + e.Type + ": " + err.Error()}
	}
	return nil
}
