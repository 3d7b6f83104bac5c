package protocol_test

import (
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
)

// DecodePayload never panics on outside input, and what it accepts
// encodes and decodes to the same message.
func FuzzDecodePayload(f *testing.F) {
	for _, m := range samples() {
		msg, err := protocol.NewMessage(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(msg.Payload))
	}
	f.Add([]byte(`{"type":"kernel.sync","version":1,"data":{"agent_id":"a","kernels":null,"as_of_revision":0,"at":"2026-01-01T00:00:00Z"}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		m, err := protocol.DecodePayload(payload, "")
		if err != nil {
			return
		}
		msg, err := protocol.Encode(uuid.New(), m)
		if err != nil {
			t.Fatalf("decoded %#v does not encode: %v", m, err)
		}
		again, err := protocol.Decode(msg)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", msg.Payload, err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip changed the message:\n%#v\n%#v", m, again)
		}
	})
}
