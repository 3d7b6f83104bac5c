package bus

import (
	"strconv"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
)

// Size limits. A NATS message is its payload plus its headers (the
// metadata, the message UUID and the JetStream message id); the server's
// max_payload limits the sum.
const (
	// MaxPayloadSize is the largest payload Publish accepts: an event
	// envelope of eventstore.MaxEnvelopeSize.
	MaxPayloadSize = eventstore.MaxEnvelopeSize
	// MaxMetadataSize limits a message's metadata: the sum of its keys' and
	// values' lengths plus 4 bytes per entry.
	MaxMetadataSize = 16 << 10
	// MaxMessageSize is the largest message on the wire, room for headers
	// included. Every stream's max_msg_size is set to it, and the NATS
	// server's max_payload must be at least this (NATS defaults to 1 MiB).
	MaxMessageSize = MaxPayloadSize + 64<<10
)

// Metadata keys of an event message: copies of envelope fields, so that a
// consumer can route or log without decoding the payload. The envelope in
// the payload is authoritative.
const (
	MetaStream   = "Cairn-Stream"
	MetaType     = "Cairn-Type"
	MetaVersion  = "Cairn-Version"
	MetaRevision = "Cairn-Revision"
	MetaPosition = "Cairn-Position"
	// MetaAttempt is set on receipt, never sent: 1 for the first delivery
	// of a message, 2 for the first redelivery... (see Attempt).
	MetaAttempt = "Cairn-Attempt"
	// MetaSubject is set on receipt, never sent: the NATS subject the
	// message arrived on (see ReportSender).
	MetaSubject = "Cairn-Subject"
)

// NewEventMessage wraps a recorded event in a message: the payload is its
// JSON envelope (eventstore.MarshalEnvelope), the UUID its event id, so
// that consumers are idempotent by event id and JetStream drops a copy
// republished within the duplicate window. Stream, type, version, revision
// and position are copied to the metadata. An event MarshalEnvelope refuses
// is refused with its *eventstore.InvalidEventError.
func NewEventMessage(ev eventstore.RecordedEvent) (*message.Message, error) {
	payload, err := eventstore.MarshalEnvelope(ev)
	if err != nil {
		return nil, err
	}
	msg := message.NewMessage(ev.ID.String(), payload)
	msg.Metadata.Set(MetaStream, ev.Stream)
	msg.Metadata.Set(MetaType, ev.Type)
	msg.Metadata.Set(MetaVersion, strconv.Itoa(ev.Version))
	msg.Metadata.Set(MetaRevision, strconv.FormatInt(ev.Revision, 10))
	msg.Metadata.Set(MetaPosition, strconv.FormatUint(ev.Position, 10))
	return msg, nil
}

// DecodeEvent decodes and validates the envelope in msg's payload
// (eventstore.UnmarshalEnvelope) and checks that the message UUID is the
// event id. Every error is an *eventstore.InvalidEventError: such a message
// will never decode, so a handler should return Permanent(err).
func DecodeEvent(msg *message.Message) (eventstore.RecordedEvent, error) {
	ev, err := eventstore.UnmarshalEnvelope(msg.Payload)
	if err != nil {
		return eventstore.RecordedEvent{}, err
	}
	if id, err := uuid.Parse(msg.UUID); err != nil || id != ev.ID {
		return eventstore.RecordedEvent{}, &eventstore.InvalidEventError{
			Index: -1, Field: "id", Reason: "message UUID " + strconv.Quote(msg.UUID) + " is not the event id " + ev.ID.String(),
		}
	}
	return ev, nil
}

// Attempt is the delivery attempt of a received message: 1 the first time,
// more when it is redelivered (after a handler error, an ack timeout or a
// restart). It is 0 for a message that did not come from the bus.
func Attempt(msg *message.Message) int {
	n, err := strconv.Atoi(msg.Metadata.Get(MetaAttempt))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
