package bus_test

import (
	"errors"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/bus"
)

func TestEventMessageRoundTrip(t *testing.T) {
	t.Parallel()
	want := event("session-1", 7, `{"a": [1, 2]}`)
	m, err := bus.NewEventMessage(want)
	if err != nil {
		t.Fatal(err)
	}
	if m.UUID != want.ID.String() {
		t.Errorf("UUID %q, want %s", m.UUID, want.ID)
	}
	got, err := bus.DecodeEvent(m)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != want.ID || string(got.Data) != string(want.Data) || !got.RecordedAt.Equal(want.RecordedAt) || got.Metadata != want.Metadata {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if bus.Attempt(m) != 0 {
		t.Errorf("attempt of a message that did not come from the bus: %d", bus.Attempt(m))
	}
}

func TestEventMessageRefusesInvalidEvents(t *testing.T) {
	t.Parallel()
	ev := event("session-1", 0, `{}`) // position 0: never recorded
	if _, err := bus.NewEventMessage(ev); !errors.Is(err, eventstore.ErrInvalidEvent) {
		t.Errorf("position 0: %v", err)
	}

	ok, err := bus.NewEventMessage(event("session-1", 1, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]*message.Message{
		"UUID is not the event id": message.NewMessage(uuid.NewString(), ok.Payload),
		"no UUID":                  message.NewMessage("", ok.Payload),
		"not an envelope":          message.NewMessage(ok.UUID, []byte(`{"id":1}`)),
		"not JSON":                 message.NewMessage(ok.UUID, []byte(`nope`)),
	}
	for name, m := range tests {
		if _, err := bus.DecodeEvent(m); !errors.Is(err, eventstore.ErrInvalidEvent) {
			t.Errorf("%s: err = %v, want an invalid event", name, err)
		}
	}
}
