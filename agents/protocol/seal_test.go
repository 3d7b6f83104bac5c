package protocol_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/domain"
)

func TestSealedMessagesOpenOnlyForTheirAgent(t *testing.T) {
	t.Parallel()
	agent, err := protocol.NewSealKey()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := protocol.NewSealKey()
	pub, _ := agent.PublicKey()
	m := protocol.KernelSync{AgentID: "a1", Kernels: []uuid.UUID{uuid.New()}, AsOfRevision: 3, At: time.Now().UTC()}
	msg, err := protocol.Encode(uuid.New(), m)
	if err != nil {
		t.Fatal(err)
	}
	clear := bytes.Clone(msg.Payload)
	if err := protocol.Seal(msg, pub); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(msg.Payload, []byte(`"agent_id"`)) || bytes.Contains(msg.Payload, []byte(m.Kernels[0].String())) || bytes.Equal(msg.Payload, clear) {
		t.Fatalf("sealed payload shows the message: %s", msg.Payload)
	}
	if _, err := protocol.Decode(msg); err == nil {
		t.Fatal("a sealed message decoded without opening")
	}
	if err := protocol.Open(msg.Copy(), other); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("another key opened it: %v", err)
	}
	tampered := msg.Copy()
	tampered.Payload = bytes.Replace(tampered.Payload, []byte(`"box":"`), []byte(`"box":"AAAA`), 1)
	if err := protocol.Open(tampered, agent); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("an altered box opened: %v", err)
	}
	if err := protocol.Open(msg, agent); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(msg.Payload, clear) {
		t.Fatalf("opened %s, want %s", msg.Payload, clear)
	}
	if _, err := protocol.Decode(msg); err != nil {
		t.Fatal(err)
	}
	// The agent refuses what is not sealed.
	plain, _ := protocol.Encode(uuid.New(), m)
	if err := protocol.Open(plain, agent); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("an unsealed message was accepted: %v", err)
	}
	if err := protocol.Seal(plain, "not-a-key"); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("sealed to a bad key: %v", err)
	}
}
