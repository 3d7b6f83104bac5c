package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/cairnhq/cairn/domain"
)

// Publish publishes msgs to topic in order, each once JetStream has stored
// the one before, and returns when the last is stored or at the first
// failure (the messages before it are published). Publishing again after a
// failure is safe: a message whose UUID JetStream has seen within the
// duplicate window is dropped.
//
// Each message needs a UUID that is a non-nil UUID (the event id, see
// NewEventMessage: consumers deduplicate by it), a payload of at most
// MaxPayloadSize bytes, and metadata of at most MaxMetadataSize bytes whose
// keys are letters, digits, '-', '_' and '.', not starting with "Nats-"
// (reserved by JetStream) nor MetaAttempt or MetaSubject. A message that breaks these is
// refused before anything is sent, as domain.ErrInvalid or
// domain.ErrTooLarge. A topic that is not a Cairn topic is
// domain.ErrInvalid; a server that does not acknowledge within
// Config.PublishTimeout is domain.ErrUnavailable.
func (b *Bus) Publish(ctx context.Context, topic string, msgs ...*message.Message) error {
	const op = "bus.publish"
	stream, err := streamFor(topic)
	if err != nil {
		return err
	}
	if strings.ContainsAny(topic, "*>") {
		return domain.Invalid(op, "topic", "%q is a filter; publish to one agent's topic", topic)
	}
	if b.cfg.AgentID != "" {
		if own, _ := ReportTopic(b.cfg.AgentID); topic != own {
			return domain.Errorf(op, domain.KindForbidden, "agent %s publishes only to its reports topic %s", b.cfg.AgentID, own)
		}
	}
	for i, m := range msgs {
		if err := validateMessage(m); err != nil {
			return fmt.Errorf("%s: message %d: %w", op, i, err)
		}
	}
	if !b.acquire() {
		return ErrClosed
	}
	defer b.active.Done()
	for i, m := range msgs {
		if err := b.publishOne(ctx, stream, topic, m); err != nil {
			return fmt.Errorf("%s: message %d (%s) to %s: %w", op, i, m.UUID, topic, err)
		}
		b.log.Debug("published", "topic", topic, "message_uuid", m.UUID, "type", m.Metadata.Get(MetaType))
	}
	return nil
}

// publishOne publishes with a watermill publisher made for this message: it
// costs no round trip, and lets the publish follow ctx (watermill's Publish
// takes none).
func (b *Bus) publishOne(ctx context.Context, stream, topic string, m *message.Message) error {
	if err := ctx.Err(); err != nil {
		return &domain.Error{Kind: domain.KindUnavailable, Err: err}
	}
	pctx, cancel := context.WithTimeout(ctx, b.cfg.PublishTimeout)
	defer cancel()
	pub, err := wmnats.NewPublisherWithNatsConn(b.nc, wmnats.PublisherPublishConfig{
		Marshaler:         &wmnats.NATSMarshaler{},
		SubjectCalculator: wmnats.DefaultSubjectCalculator,
		JetStream: wmnats.JetStreamConfig{
			// Nats-Msg-Id = the message UUID: JetStream drops a copy
			// republished within the duplicate window.
			TrackMsgId: true,
			PublishOptions: []nats.PubOpt{
				nats.Context(pctx),
				// Fail rather than store the message anywhere else.
				nats.ExpectStream(stream),
			},
		},
	}, b.wmLog)
	if err != nil {
		return &domain.Error{Kind: domain.KindInternal, Err: err}
	}
	// Not pub.Close(): it would close the Bus's connection.
	err = pub.Publish(topic, m)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, nats.ErrMaxPayload):
		return &domain.Error{Kind: domain.KindTooLarge, Message: fmt.Sprintf("the server's max_payload (%d bytes) is too small", b.nc.MaxPayload()), Err: err}
	case ctx.Err() != nil:
		return &domain.Error{Kind: domain.KindUnavailable, Err: ctx.Err()}
	case pctx.Err() != nil:
		return &domain.Error{Kind: domain.KindUnavailable, Message: fmt.Sprintf("no acknowledgement from JetStream within %s", b.cfg.PublishTimeout), Err: err}
	case errors.Is(err, nats.ErrNoResponders):
		return &domain.Error{Kind: domain.KindUnavailable, Message: "no JetStream stream answers for this topic (streams not provisioned?)", Err: err}
	}
	return &domain.Error{Kind: domain.KindUnavailable, Err: err}
}

// validateMessage checks what Publish requires of a message.
func validateMessage(m *message.Message) error {
	const op = "bus.publish"
	if m == nil {
		return domain.Invalid(op, "message", "is nil")
	}
	if id, err := uuid.Parse(m.UUID); err != nil || id == uuid.Nil {
		return domain.Invalid(op, "uuid", "%q is not a non-nil UUID (use the event id)", m.UUID)
	}
	if len(m.Payload) > MaxPayloadSize {
		return &domain.Error{Op: op, Kind: domain.KindTooLarge, Field: "payload",
			Message: fmt.Sprintf("is %d bytes, the limit is %d", len(m.Payload), MaxPayloadSize)}
	}
	size := 0
	for k, v := range m.Metadata {
		size += len(k) + len(v) + 4
		if err := validateMetadataKey(k); err != nil {
			return err
		}
		if strings.ContainsAny(v, "\r\n") {
			return domain.Invalid(op, "metadata", "value of %q contains a line break", k)
		}
	}
	if size > MaxMetadataSize {
		return &domain.Error{Op: op, Kind: domain.KindTooLarge, Field: "metadata",
			Message: fmt.Sprintf("is %d bytes, the limit is %d", size, MaxMetadataSize)}
	}
	return nil
}

func validateMetadataKey(k string) error {
	const op = "bus.publish"
	switch {
	case k == "":
		return domain.Invalid(op, "metadata", "empty key")
	case strings.HasPrefix(strings.ToLower(k), "nats-"):
		return domain.Invalid(op, "metadata", "key %q: the Nats- prefix is reserved by JetStream", k)
	case k == MetaAttempt || k == MetaSubject || k == wmnats.WatermillUUIDHdr:
		return domain.Invalid(op, "metadata", "key %q is set by the bus", k)
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !isIDByte(c) && c != '.' {
			return domain.Invalid(op, "metadata", "key %q: byte %q is not allowed; use letters, digits, '-', '_' and '.'", k, c)
		}
	}
	return nil
}
