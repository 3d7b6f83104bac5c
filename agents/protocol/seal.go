package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nkeys"

	"github.com/cairnhq/cairn/domain"
)

// MetaSealed marks a message whose payload is sealed to its agent (value
// "x25519"): Seal sets it, Open removes it.
const MetaSealed = "Cairn-Sealed"

const sealScheme = "x25519"

// sealed is the payload of a sealed message: the box (NaCl box, X25519
// with XSalsa20-Poly1305, as nkeys' curve keys make it) of the original
// payload, and the one-time sender key it was sealed with.
type sealed struct {
	Sealed struct {
		From string `json:"from"`
		Box  []byte `json:"box"`
	} `json:"sealed"`
}

// NewSealKey makes an agent's sealing key pair: its public key (X...) goes
// in AgentRegister.SealKey; its seed stays with the agent.
func NewSealKey() (nkeys.KeyPair, error) { return nkeys.CreateCurveKeys() }

// Seal replaces msg's payload by a box only the holder of recipient's
// private key opens (recipient: an agent's AgentRegister.SealKey), so that
// what the bus keeps of a message for an agent (a kernel's environment,
// its mounts) is unreadable to anyone else who can read the stream. Each
// message is sealed with a new one-time key: who sent it is what the bus's
// permissions guarantee (only the manager publishes to agents' topics),
// not the box. The metadata (type, agent, kernel) stays readable.
func Seal(msg *message.Message, recipient string) error {
	const op = "protocol.seal"
	if !nkeys.IsValidPublicCurveKey(recipient) {
		return domain.Invalid(op, "seal_key", "%q is not a public curve key (X...)", recipient)
	}
	if msg.Metadata.Get(MetaSealed) != "" {
		return domain.Errorf(op, domain.KindInvalid, "message %s is sealed already", msg.UUID)
	}
	once, err := nkeys.CreateCurveKeys()
	if err != nil {
		return &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
	}
	from, err := once.PublicKey()
	if err != nil {
		return &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
	}
	box, err := once.Seal(msg.Payload, recipient)
	if err != nil {
		return &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
	}
	var s sealed
	s.Sealed.From, s.Sealed.Box = from, box
	payload, err := json.Marshal(s)
	if err != nil {
		return &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
	}
	msg.Payload = payload
	msg.Metadata.Set(MetaSealed, sealScheme)
	return nil
}

// Open reverses Seal with the recipient's key pair. A message that is not
// sealed, or that key cannot open (sealed to another key, altered), is
// domain.ErrInvalid: it never will open.
func Open(msg *message.Message, key nkeys.KeyPair) error {
	const op = "protocol.open"
	if scheme := msg.Metadata.Get(MetaSealed); scheme != sealScheme {
		return domain.Invalid(op, "payload", "message %s is not sealed (%s %q): an agent accepts only sealed messages", msg.UUID, MetaSealed, scheme)
	}
	var s sealed
	dec := json.NewDecoder(bytes.NewReader(msg.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return domain.Invalid(op, "payload", "not a sealed payload: %v", err)
	}
	if !nkeys.IsValidPublicCurveKey(s.Sealed.From) {
		return domain.Invalid(op, "payload", "sender key %q is not a public curve key", s.Sealed.From)
	}
	payload, err := key.Open(s.Sealed.Box, s.Sealed.From)
	if err != nil {
		return domain.Invalid(op, "payload", "cannot open message %s: %v", msg.UUID, fmt.Errorf("%w", err))
	}
	msg.Payload = payload
	delete(msg.Metadata, MetaSealed)
	return nil
}
