package eventstore_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
)

func ev(typ, data string) eventstore.EventData {
	return eventstore.EventData{ID: eventstore.NewEventID(), Type: typ, Version: 1, Data: json.RawMessage(data)}
}

func TestPrepareRejects(t *testing.T) {
	t.Parallel()
	dup := ev("a", `{}`)
	tooMany := make([]eventstore.EventData, eventstore.MaxEventsPerAppend+1)
	for i := range tooMany {
		tooMany[i] = ev("a", `{}`)
	}
	tests := []struct {
		name    string
		stream  string
		events  []eventstore.EventData
		maxSize int
		field   string
		index   int
	}{
		{"empty stream", "", []eventstore.EventData{ev("a", `{}`)}, 0, "stream", -1},
		{"empty stream, no events", "", nil, 0, "stream", -1},
		{"reserved stream", "$all", []eventstore.EventData{ev("a", `{}`)}, 0, "stream", -1},
		{"stream too long", strings.Repeat("s", eventstore.MaxStreamNameLength+1), nil, 0, "stream", -1},
		{"stream not UTF-8", "s\xff", nil, 0, "stream", -1},
		{"stream with NUL", "s\x00t", nil, 0, "stream", -1},
		{"too many events", "s", tooMany, 0, "events", -1},
		{"zero id", "s", []eventstore.EventData{ev("a", `{}`), {Type: "a"}}, 0, "id", 1},
		{"duplicate id", "s", []eventstore.EventData{dup, ev("a", `{}`), dup}, 0, "id", 2},
		{"empty type", "s", []eventstore.EventData{ev("", `{}`)}, 0, "type", 0},
		{"type too long", "s", []eventstore.EventData{ev(strings.Repeat("t", eventstore.MaxTypeLength+1), `{}`)}, 0, "type", 0},
		{"type not UTF-8", "s", []eventstore.EventData{ev("t\xff", `{}`)}, 0, "type", 0},
		{"type with NUL", "s", []eventstore.EventData{ev("t\x00x", `{}`)}, 0, "type", 0},
		{"negative version", "s", []eventstore.EventData{{ID: uuid.New(), Type: "a", Version: -1}}, 0, "version", 0},
		{"data not JSON", "s", []eventstore.EventData{ev("a", `{}`), ev("a", `{"a":`)}, 0, "data", 1},
		{"data is text", "s", []eventstore.EventData{ev("a", `hello`)}, 0, "data", 0},
		{"over custom limit", "s", []eventstore.EventData{ev("a", `"12345678"`)}, 11, "data", 0},
		{"over default limit", "s", []eventstore.EventData{ev("a", `"`+strings.Repeat("x", eventstore.DefaultMaxEventSize)+`"`)}, 0, "data", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := eventstore.Prepare(tt.stream, tt.events, tt.maxSize)
			if err == nil {
				t.Fatalf("Prepare accepted the append (%d events prepared)", len(out))
			}
			var ie *eventstore.InvalidEventError
			if !errors.As(err, &ie) || !errors.Is(err, eventstore.ErrInvalidEvent) {
				t.Fatalf("error %v (%T) is not an *InvalidEventError", err, err)
			}
			if ie.Field != tt.field || ie.Index != tt.index {
				t.Errorf("error names field %q index %d, want %q index %d (%v)", ie.Field, ie.Index, tt.field, tt.index, err)
			}
			if out != nil {
				t.Errorf("Prepare returned %d events with its error", len(out))
			}
		})
	}
}

func TestPrepareNormalises(t *testing.T) {
	t.Parallel()
	md := eventstore.Metadata{Actor: "alice", RequestID: "r1"}
	in := []eventstore.EventData{
		{ID: uuid.New(), Type: "a", Version: 0, Data: nil, Metadata: md},
		{ID: uuid.New(), Type: "b", Version: 3, Data: json.RawMessage(`{"z": 1,  "a": 2}`)},
		{ID: uuid.New(), Type: "c", Version: 1, Data: json.RawMessage(`null`)},
	}
	out, err := eventstore.Prepare("s", in, 0)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if len(out) != len(in) {
		t.Fatalf("Prepare returned %d events, want %d", len(out), len(in))
	}
	want := []struct {
		version int
		data    string
	}{{1, `{}`}, {3, `{"z": 1,  "a": 2}`}, {1, `null`}}
	for i, p := range out {
		if p.ID != in[i].ID || p.Type != in[i].Type {
			t.Errorf("event %d: id/type %s/%q, want %s/%q", i, p.ID, p.Type, in[i].ID, in[i].Type)
		}
		if p.Version != want[i].version {
			t.Errorf("event %d: version %d, want %d", i, p.Version, want[i].version)
		}
		if string(p.Data) != want[i].data {
			t.Errorf("event %d: data %q, want %q (byte-exact)", i, p.Data, want[i].data)
		}
		got, err := eventstore.DecodeMetadata(p.MetadataJSON)
		if err != nil {
			t.Fatalf("event %d: metadata %q does not decode: %v", i, p.MetadataJSON, err)
		}
		if i == 0 && got != md {
			t.Errorf("event 0: metadata %+v, want %+v", got, md)
		}
	}
	if !bytes.Equal(out[1].MetadataJSON, []byte(`{}`)) {
		t.Errorf("zero metadata encodes as %q, want {}", out[1].MetadataJSON)
	}
}

func TestPrepareSizeBoundary(t *testing.T) {
	t.Parallel()
	// The limit covers data plus encoded metadata ({} is 2 bytes).
	for _, tt := range []struct {
		dataLen int
		ok      bool
	}{{eventstore.DefaultMaxEventSize - 2, true}, {eventstore.DefaultMaxEventSize - 1, false}} {
		data := `"` + strings.Repeat("x", tt.dataLen-2) + `"`
		_, err := eventstore.Prepare("s", []eventstore.EventData{ev("a", data)}, 0)
		if (err == nil) != tt.ok {
			t.Errorf("data of %d bytes: err = %v, want ok=%v", tt.dataLen, err, tt.ok)
		}
	}
	// Metadata counts too.
	md := eventstore.Metadata{Actor: strings.Repeat("a", 100)}
	mdLen := len(`{"actor":""}`) + 100
	e := ev("a", `"`+strings.Repeat("x", 200-mdLen-2)+`"`)
	e.Metadata = md
	if _, err := eventstore.Prepare("s", []eventstore.EventData{e}, 200); err != nil {
		t.Errorf("event of exactly 200 bytes with metadata refused: %v", err)
	}
	if _, err := eventstore.Prepare("s", []eventstore.EventData{e}, 199); err == nil {
		t.Error("event of 200 bytes accepted with a limit of 199")
	}
}

func TestPrepareAcceptsEmptyAppendAndLimits(t *testing.T) {
	t.Parallel()
	out, err := eventstore.Prepare("s", nil, 0)
	if err != nil || len(out) != 0 {
		t.Errorf("empty append: %d events, %v", len(out), err)
	}
	maxName := strings.Repeat("n", eventstore.MaxStreamNameLength)
	maxType := strings.Repeat("t", eventstore.MaxTypeLength)
	if _, err := eventstore.Prepare(maxName, []eventstore.EventData{ev(maxType, `{}`)}, 0); err != nil {
		t.Errorf("longest stream name and type refused: %v", err)
	}
}

func TestValidateStreamName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"a", "session-0192", "a$", "ünïcödé-流", "with space", strings.Repeat("s", eventstore.MaxStreamNameLength)} {
		if err := eventstore.ValidateStreamName(ok); err != nil {
			t.Errorf("ValidateStreamName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "$", "$all", "$ce-session", "a\x00", "\xc3", strings.Repeat("s", eventstore.MaxStreamNameLength+1)} {
		err := eventstore.ValidateStreamName(bad)
		var ie *eventstore.InvalidEventError
		if !errors.As(err, &ie) || ie.Field != "stream" || ie.Index != -1 {
			t.Errorf("ValidateStreamName(%q) = %v, want an invalid stream error", bad, err)
		}
	}
}

func TestDecodeMetadata(t *testing.T) {
	t.Parallel()
	md, err := eventstore.DecodeMetadata(nil)
	if err != nil || !md.IsZero() {
		t.Errorf("DecodeMetadata(nil) = %+v, %v", md, err)
	}
	md, err = eventstore.DecodeMetadata([]byte(`{"actor":"a","client_ip":"::1","from_the_future":[1]}`))
	if err != nil || md != (eventstore.Metadata{Actor: "a", ClientIP: "::1"}) {
		t.Errorf("DecodeMetadata with an unknown field = %+v, %v", md, err)
	}
	if md.IsZero() {
		t.Error("IsZero() = true for metadata with an actor")
	}
	if _, err := eventstore.DecodeMetadata([]byte(`{"actor":`)); err == nil {
		t.Error("DecodeMetadata accepted truncated JSON")
	}
}

func TestNewEvent(t *testing.T) {
	t.Parallel()
	md := eventstore.Metadata{Actor: "a"}
	e, err := eventstore.NewEvent("session.requested", map[string]int{"gpus": 2}, md)
	if err != nil {
		t.Fatalf("NewEvent: %v", err)
	}
	if e.ID.Version() != 7 {
		t.Errorf("id %s is UUID version %d, want 7", e.ID, e.ID.Version())
	}
	if e.Type != "session.requested" || e.Version != 1 || string(e.Data) != `{"gpus":2}` || e.Metadata != md {
		t.Errorf("NewEvent = %+v", e)
	}
	if e2, _ := eventstore.NewEvent("x", nil, md); e2.ID == e.ID {
		t.Error("two NewEvent calls share an id")
	}
	_, err = eventstore.NewEvent("x", make(chan int), md)
	var ie *eventstore.InvalidEventError
	if !errors.As(err, &ie) || ie.Field != "data" {
		t.Errorf("NewEvent with unmarshalable data: %v, want an invalid data error", err)
	}
}

func TestRecordedEventDecode(t *testing.T) {
	t.Parallel()
	e := eventstore.RecordedEvent{Type: "t", Data: json.RawMessage(`{"gpus":2}`)}
	var v struct{ GPUs int }
	if err := e.Decode(&v); err != nil || v.GPUs != 2 {
		t.Errorf("Decode = %+v, %v", v, err)
	}
	e.Data = json.RawMessage(`{"gpus":"two"}`)
	if err := e.Decode(&v); !errors.Is(err, eventstore.ErrInvalidEvent) {
		t.Errorf("Decode of mismatched data: %v, want ErrInvalidEvent", err)
	}
}
