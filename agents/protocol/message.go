package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// Message types: stable wire names, never derived from Go type names.
const (
	// Agent → manager, on the reports topic.
	TypeAgentRegister  = "agent.register"
	TypeAgentHeartbeat = "agent.heartbeat"
	TypeKernelStatus   = "kernel.status"
	TypeKernelActivity = "kernel.activity"

	// Manager → agent, on the agent's topic.
	TypeKernelCreate  = "kernel.create"
	TypeKernelDestroy = "kernel.destroy"
	TypeKernelSync    = "kernel.sync"
)

// Version is the schema version of every message type this package
// writes and reads.
const Version = 1

// Metadata keys of a protocol message. MetaType and MetaVersion are the
// keys infra/bus uses for events (bus.MetaType, bus.MetaVersion), so the
// bus logs a message's type whatever it carries.
const (
	MetaType    = "Cairn-Type"
	MetaVersion = "Cairn-Version"
	// MetaAgent is the agent the message is from or for.
	MetaAgent = "Cairn-Agent"
	// MetaKernel is the kernel a message is about, when it is about one.
	MetaKernel = "Cairn-Kernel"
)

// Message is one protocol message: AgentRegister, AgentHeartbeat,
// KernelStatus, KernelActivity, KernelCreate, KernelDestroy or KernelSync (values, not
// pointers).
type Message interface {
	// MessageType is the message's wire type (TypeKernelStatus, ...).
	MessageType() string
	// Agent is the agent the message is from or for.
	Agent() string
	// Validate reports every problem at once; each error matches
	// domain.ErrInvalid.
	Validate() error
}

// kernelMessage is a message about one kernel.
type kernelMessage interface {
	Kernel() uuid.UUID
}

// wire is the payload of every message.
type wire struct {
	Type    string          `json:"type"`
	Version int             `json:"version"`
	Data    json.RawMessage `json:"data"`
}

const opEncode, opDecode = "protocol.encode", "protocol.decode"

// NewMessage encodes m in a message with a new UUIDv7 id. Publish the
// same *message.Message again to retry, so that its id stays the same.
func NewMessage(m Message) (*message.Message, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, &domain.Error{Op: opEncode, Kind: domain.KindInternal, Message: "new message id", Err: err}
	}
	return Encode(id, m)
}

// Encode validates m and encodes it in a message with the given id (an
// event id or a DerivedID, for messages built from events). A nil id or an
// invalid m is domain.ErrInvalid.
func Encode(id uuid.UUID, m Message) (*message.Message, error) {
	if m == nil {
		return nil, domain.Invalid(opEncode, "message", "is nil")
	}
	if id == uuid.Nil {
		return nil, domain.Invalid(opEncode, "id", "must not be the nil UUID")
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, &domain.Error{Op: opEncode, Kind: domain.KindInternal, Message: m.MessageType(), Err: err}
	}
	payload, err := json.Marshal(wire{Type: m.MessageType(), Version: Version, Data: data})
	if err != nil {
		return nil, &domain.Error{Op: opEncode, Kind: domain.KindInternal, Message: m.MessageType(), Err: err}
	}
	msg := message.NewMessage(id.String(), payload)
	msg.Metadata.Set(MetaType, m.MessageType())
	msg.Metadata.Set(MetaVersion, strconv.Itoa(Version))
	msg.Metadata.Set(MetaAgent, m.Agent())
	if km, ok := m.(kernelMessage); ok {
		msg.Metadata.Set(MetaKernel, km.Kernel().String())
	}
	return msg, nil
}

// Decode decodes and validates a message's payload, returning one of the
// Message types (a value). It refuses, with domain.ErrInvalid, a payload
// that is not a protocol message, an unknown type or version, a type that
// disagrees with the Cairn-Type metadata, a message id that is not a UUID,
// and a message that does not validate: such a message never will, so a
// bus handler returns bus.Permanent(err).
func Decode(msg *message.Message) (Message, error) {
	if msg == nil {
		return nil, domain.Invalid(opDecode, "message", "is nil")
	}
	if _, err := uuid.Parse(msg.UUID); err != nil {
		return nil, domain.Invalid(opDecode, "id", "message id %q is not a UUID", msg.UUID)
	}
	return DecodePayload(msg.Payload, msg.Metadata.Get(MetaType))
}

// DecodePayload decodes and validates a payload. wantType, if not empty,
// must be the payload's type (the Cairn-Type metadata).
func DecodePayload(payload []byte, wantType string) (Message, error) {
	var w wire
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&w); err != nil {
		return nil, domain.Invalid(opDecode, "payload", "not a protocol message: %v", err)
	}
	if dec.More() {
		return nil, domain.Invalid(opDecode, "payload", "trailing data after the message")
	}
	switch {
	case w.Type == "":
		return nil, domain.Invalid(opDecode, "type", "missing")
	case wantType != "" && wantType != w.Type:
		return nil, domain.Invalid(opDecode, "type", "payload type %q disagrees with metadata %s %q", w.Type, MetaType, wantType)
	case w.Version != Version:
		return nil, domain.Invalid(opDecode, "version", "%s version %d is not supported (want %d)", w.Type, w.Version, Version)
	case len(w.Data) == 0 || bytes.Equal(w.Data, []byte("null")):
		return nil, domain.Invalid(opDecode, "data", "missing")
	}
	var (
		m   Message
		err error
	)
	switch w.Type {
	case TypeAgentRegister:
		m, err = decodeData[AgentRegister](w.Data)
	case TypeAgentHeartbeat:
		m, err = decodeData[AgentHeartbeat](w.Data)
	case TypeKernelStatus:
		m, err = decodeData[KernelStatus](w.Data)
	case TypeKernelActivity:
		m, err = decodeData[KernelActivity](w.Data)
	case TypeKernelCreate:
		m, err = decodeData[KernelCreate](w.Data)
	case TypeKernelDestroy:
		m, err = decodeData[KernelDestroy](w.Data)
	case TypeKernelSync:
		m, err = decodeData[KernelSync](w.Data)
	default:
		return nil, domain.Invalid(opDecode, "type", "unknown message type %q", w.Type)
	}
	if err != nil {
		return nil, domain.Invalid(opDecode, "data", "%s: %v", w.Type, err)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", opDecode, w.Type, err)
	}
	return m, nil
}

func decodeData[T Message](data []byte) (Message, error) {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// DerivedID is the id of a message derived from another message or event
// (base) and a name that tells the derived messages of one base apart (a
// kernel id, a message type): a name-based UUID (version 5), the same
// every time, so that republishing produces the same id.
func DerivedID(base uuid.UUID, name string) uuid.UUID {
	return uuid.NewSHA1(base, []byte(name))
}
