package eventstore_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
)

func sampleRecorded() eventstore.RecordedEvent {
	return eventstore.RecordedEvent{
		ID:         uuid.MustParse("01936f3c-1a2b-7c3d-8e4f-5a6b7c8d9e0f"),
		Stream:     "session-6f1c1c9e-2f55-4f0e-9a3e-4c1d2b3a4f5e",
		Type:       "session.requested",
		Version:    2,
		Revision:   7,
		Position:   1234,
		RecordedAt: time.Date(2025, 3, 1, 12, 30, 45, 123456789, time.UTC),
		Data:       json.RawMessage(`{"b": 1,  "a": [1, 2.50, 1e3], "s": "\u00e9<>&"}`),
		Metadata: eventstore.Metadata{
			Actor: "alice@example.com", AccessKey: "AKIA1", ActingAs: "bob",
			RequestID: "req-1", CausationID: "cmd-1", ClientIP: "192.0.2.7",
		},
	}
}

// diffRecorded describes how two events differ, "" when they are equal.
func diffRecorded(a, b eventstore.RecordedEvent) string {
	var d []string
	if a.ID != b.ID {
		d = append(d, fmt.Sprintf("id %s != %s", a.ID, b.ID))
	}
	if a.Stream != b.Stream {
		d = append(d, fmt.Sprintf("stream %q != %q", a.Stream, b.Stream))
	}
	if a.Type != b.Type {
		d = append(d, fmt.Sprintf("type %q != %q", a.Type, b.Type))
	}
	if a.Version != b.Version {
		d = append(d, fmt.Sprintf("version %d != %d", a.Version, b.Version))
	}
	if a.Revision != b.Revision {
		d = append(d, fmt.Sprintf("revision %d != %d", a.Revision, b.Revision))
	}
	if a.Position != b.Position {
		d = append(d, fmt.Sprintf("position %d != %d", a.Position, b.Position))
	}
	if !a.RecordedAt.Equal(b.RecordedAt) {
		d = append(d, fmt.Sprintf("recorded_at %s != %s", a.RecordedAt, b.RecordedAt))
	}
	if !bytes.Equal(a.Data, b.Data) {
		d = append(d, fmt.Sprintf("data %q != %q", a.Data, b.Data))
	}
	if a.Metadata != b.Metadata {
		d = append(d, fmt.Sprintf("metadata %+v != %+v", a.Metadata, b.Metadata))
	}
	return strings.Join(d, "; ")
}

func TestEnvelopeRoundTrip(t *testing.T) {
	t.Parallel()
	want := sampleRecorded()
	b, err := eventstore.MarshalEnvelope(want)
	if err != nil {
		t.Fatalf("MarshalEnvelope: %v", err)
	}
	if !bytes.Contains(b, want.Data) {
		t.Errorf("envelope does not carry data byte for byte: %s", b)
	}
	got, err := eventstore.UnmarshalEnvelope(b)
	if err != nil {
		t.Fatalf("UnmarshalEnvelope(%s): %v", b, err)
	}
	if d := diffRecorded(want, got); d != "" {
		t.Errorf("round trip changed the event: %s", d)
	}
	if got.RecordedAt.Location() != time.UTC {
		t.Errorf("recorded_at location = %v, want UTC", got.RecordedAt.Location())
	}

	// The envelope is plain JSON with RecordedEvent's field names.
	var generic map[string]any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatalf("envelope is not JSON: %v", err)
	}
	for _, k := range []string{"id", "stream", "type", "version", "revision", "position", "recorded_at", "data", "metadata"} {
		if _, ok := generic[k]; !ok {
			t.Errorf("envelope lacks field %q: %s", k, b)
		}
	}
}

func TestMarshalEnvelopeConvertsToUTC(t *testing.T) {
	t.Parallel()
	ev := sampleRecorded()
	ev.RecordedAt = time.Date(2025, 3, 1, 14, 30, 45, 0, time.FixedZone("CET", 2*3600))
	b, err := eventstore.MarshalEnvelope(ev)
	if err != nil {
		t.Fatalf("MarshalEnvelope: %v", err)
	}
	if !bytes.Contains(b, []byte(`"recorded_at":"2025-03-01T12:30:45Z"`)) {
		t.Errorf("recorded_at not written in UTC: %s", b)
	}
}

// A RecordedEvent encoded by encoding/json (compacted data) also decodes.
func TestUnmarshalEnvelopeAcceptsEncodingJSON(t *testing.T) {
	t.Parallel()
	want := sampleRecorded()
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := eventstore.UnmarshalEnvelope(b)
	if err != nil {
		t.Fatalf("UnmarshalEnvelope(%s): %v", b, err)
	}
	if !json.Valid(got.Data) || got.ID != want.ID || got.Position != want.Position {
		t.Errorf("decoded %+v", got)
	}
}

func TestUnmarshalEnvelopeToleratesUnknownFields(t *testing.T) {
	t.Parallel()
	in := `{"id":"01936f3c-1a2b-7c3d-8e4f-5a6b7c8d9e0f","stream":"s","type":"t","version":1,"revision":0,` +
		`"position":1,"recorded_at":"2025-01-01T00:00:00Z","data":{},` +
		`"schema":"v9","trace":{"span":[1,2,3]},"metadata":{"actor":"a","tenant":"x"}}`
	got, err := eventstore.UnmarshalEnvelope([]byte(in))
	if err != nil {
		t.Fatalf("UnmarshalEnvelope: %v", err)
	}
	if got.Metadata.Actor != "a" || got.Stream != "s" {
		t.Errorf("decoded %+v", got)
	}
}

// The data value is kept byte for byte, without surrounding whitespace.
func TestUnmarshalEnvelopeKeepsData(t *testing.T) {
	t.Parallel()
	in := `{"id":"01936f3c-1a2b-7c3d-8e4f-5a6b7c8d9e0f","stream":"s","type":"t","version":1,"revision":0,` +
		`"position":1,"recorded_at":"2025-01-01T00:00:00Z","data":  { "z" : [ 1 , 2 ] , "a":"\u0000" }  }`
	got, err := eventstore.UnmarshalEnvelope([]byte(in))
	if err != nil {
		t.Fatalf("UnmarshalEnvelope: %v", err)
	}
	if want := `{ "z" : [ 1 , 2 ] , "a":"\u0000" }`; string(got.Data) != want {
		t.Errorf("data = %q, want %q", got.Data, want)
	}
}

func TestUnmarshalEnvelopeRejects(t *testing.T) {
	t.Parallel()
	valid := map[string]any{
		"id":          "01936f3c-1a2b-7c3d-8e4f-5a6b7c8d9e0f",
		"stream":      "session-1",
		"type":        "session.requested",
		"version":     1,
		"revision":    0,
		"position":    1,
		"recorded_at": "2025-01-01T00:00:00Z",
		"data":        json.RawMessage(`{}`),
	}
	with := func(key string, value any) []byte {
		m := make(map[string]any, len(valid))
		for k, v := range valid {
			m[k] = v
		}
		if value == nil {
			delete(m, key)
		} else {
			m[key] = value
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if _, err := eventstore.UnmarshalEnvelope(with("id", valid["id"])); err != nil {
		t.Fatalf("the base envelope must be valid: %v", err)
	}
	bigData := `"` + strings.Repeat("x", eventstore.DefaultMaxEventSize) + `"`
	tests := []struct {
		name  string
		in    []byte
		field string
	}{
		{"empty input", []byte(``), "envelope"},
		{"not JSON", []byte(`{"id":`), "envelope"},
		{"array", []byte(`[1,2]`), "envelope"},
		{"null", []byte(`null`), "id"},
		{"trailing garbage", append(with("id", valid["id"]), " x"...), "envelope"},
		{"missing id", with("id", nil), "id"},
		{"null id", []byte(strings.Replace(string(with("id", "X")), `"X"`, "null", 1)), "id"},
		{"id not a uuid", with("id", "not-a-uuid"), "id"},
		{"id wrong type", with("id", 42), "id"},
		{"nil id", with("id", uuid.Nil.String()), "id"},
		{"missing stream", with("stream", nil), "stream"},
		{"empty stream", with("stream", ""), "stream"},
		{"reserved stream", with("stream", "$all"), "stream"},
		{"stream with NUL", with("stream", "a\x00b"), "stream"},
		{"stream too long", with("stream", strings.Repeat("s", eventstore.MaxStreamNameLength+1)), "stream"},
		{"missing type", with("type", nil), "type"},
		{"empty type", with("type", ""), "type"},
		{"type too long", with("type", strings.Repeat("t", eventstore.MaxTypeLength+1)), "type"},
		{"missing version", with("version", nil), "version"},
		{"version 0", with("version", 0), "version"},
		{"negative version", with("version", -1), "version"},
		{"fractional version", with("version", 1.5), "version"},
		{"missing revision", with("revision", nil), "revision"},
		{"negative revision", with("revision", -1), "revision"},
		{"revision as string", with("revision", "0"), "revision"},
		{"missing position", with("position", nil), "position"},
		{"position 0", with("position", 0), "position"},
		{"negative position", with("position", -5), "position"},
		{"missing recorded_at", with("recorded_at", nil), "recorded_at"},
		{"recorded_at not a time", with("recorded_at", "yesterday"), "recorded_at"},
		{"recorded_at zero", with("recorded_at", "0001-01-01T00:00:00Z"), "recorded_at"},
		{"recorded_at before year 1 in UTC", with("recorded_at", "0001-01-01T00:00:00+01:00"), "recorded_at"},
		{"recorded_at as number", with("recorded_at", 1700000000), "recorded_at"},
		{"missing data", with("data", nil), "data"},
		{"data too big", with("data", json.RawMessage(bigData)), "data"},
		{"input too big", with("padding", strings.Repeat("p", eventstore.MaxEnvelopeSize)), "envelope"},
		{"metadata wrong type", with("metadata", "actor"), "metadata"},
		{"metadata field wrong type", with("metadata", map[string]any{"actor": 7}), "metadata.actor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev, err := eventstore.UnmarshalEnvelope(tt.in)
			if err == nil {
				t.Fatalf("UnmarshalEnvelope accepted %.200s as %+v", tt.in, ev)
			}
			var ie *eventstore.InvalidEventError
			if !errors.As(err, &ie) || !errors.Is(err, eventstore.ErrInvalidEvent) {
				t.Fatalf("error %v (%T) is not an *InvalidEventError", err, err)
			}
			if ie.Field != tt.field || ie.Index != -1 {
				t.Errorf("error names field %q index %d, want %q index -1 (%v)", ie.Field, ie.Index, tt.field, err)
			}
		})
	}
}

// The size rules: data plus metadata within DefaultMaxEventSize is accepted
// whole, one byte more is refused.
func TestEnvelopeSizeLimit(t *testing.T) {
	t.Parallel()
	ev := sampleRecorded()
	ev.Metadata = eventstore.Metadata{}
	// {} is the metadata's encoding: 2 bytes.
	payload := eventstore.DefaultMaxEventSize - 2
	ev.Data = json.RawMessage(`"` + strings.Repeat("y", payload-2) + `"`)
	b, err := eventstore.MarshalEnvelope(ev)
	if err != nil {
		t.Fatalf("MarshalEnvelope at the limit: %v", err)
	}
	if len(b) > eventstore.MaxEnvelopeSize {
		t.Fatalf("envelope of a maximal event is %d bytes, over MaxEnvelopeSize %d", len(b), eventstore.MaxEnvelopeSize)
	}
	got, err := eventstore.UnmarshalEnvelope(b)
	if err != nil {
		t.Fatalf("UnmarshalEnvelope at the limit: %v", err)
	}
	if len(got.Data) != payload {
		t.Errorf("data is %d bytes, want %d", len(got.Data), payload)
	}

	ev.Data = json.RawMessage(`"` + strings.Repeat("y", payload-1) + `"`)
	_, err = eventstore.MarshalEnvelope(ev)
	var ie *eventstore.InvalidEventError
	if !errors.As(err, &ie) || ie.Field != "data" {
		t.Errorf("MarshalEnvelope one byte over the limit: err = %v, want invalid data", err)
	}
}

func TestMarshalEnvelopeRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(*eventstore.RecordedEvent)
		field  string
	}{
		{"nil id", func(e *eventstore.RecordedEvent) { e.ID = uuid.Nil }, "id"},
		{"bad stream", func(e *eventstore.RecordedEvent) { e.Stream = "$x" }, "stream"},
		{"empty type", func(e *eventstore.RecordedEvent) { e.Type = "" }, "type"},
		{"invalid UTF-8 type", func(e *eventstore.RecordedEvent) { e.Type = "a\xffb" }, "type"},
		{"version 0", func(e *eventstore.RecordedEvent) { e.Version = 0 }, "version"},
		{"negative revision", func(e *eventstore.RecordedEvent) { e.Revision = -1 }, "revision"},
		{"position 0", func(e *eventstore.RecordedEvent) { e.Position = 0 }, "position"},
		{"zero time", func(e *eventstore.RecordedEvent) { e.RecordedAt = time.Time{} }, "recorded_at"},
		{"year 10000", func(e *eventstore.RecordedEvent) { e.RecordedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "recorded_at"},
		{"no data", func(e *eventstore.RecordedEvent) { e.Data = nil }, "data"},
		{"data not JSON", func(e *eventstore.RecordedEvent) { e.Data = json.RawMessage(`{"a":`) }, "data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev := sampleRecorded()
			tt.modify(&ev)
			b, err := eventstore.MarshalEnvelope(ev)
			var ie *eventstore.InvalidEventError
			if !errors.As(err, &ie) {
				t.Fatalf("MarshalEnvelope = %s, %v; want an *InvalidEventError", b, err)
			}
			if ie.Field != tt.field {
				t.Errorf("error names field %q, want %q (%v)", ie.Field, tt.field, err)
			}
		})
	}
}

func FuzzUnmarshalEnvelope(f *testing.F) {
	valid, err := eventstore.MarshalEnvelope(sampleRecorded())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	compact, err := json.Marshal(sampleRecorded())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(compact)
	const head = `{"id":"01936f3c-1a2b-7c3d-8e4f-5a6b7c8d9e0f","stream":"s","type":"t","version":1,"revision":0,"position":1,`
	for _, s := range []string{
		head + `"recorded_at":"2025-01-01T00:00:00Z","data":{}}`,
		head + `"recorded_at":"2025-01-01T00:00:00.123456789+05:30","data":[1,"2",{"3":null}],"metadata":{"actor":"a","x":1}}`,
		head + `"recorded_at":"2025-01-01T00:00:00Z","data": "str" ,"extra":{"nested":[true]}}`,
		head + `"recorded_at":"2025-01-01T00:00:00Z","data":null}`,
		head + `"recorded_at":"0000-01-01T00:30:00+01:00","data":{}}`,
		head + `"recorded_at":"9999-12-31T23:59:59-01:00","data":{}}`,
		head + `"recorded_at":"2025-01-01T00:00:00Z","data":{"a":"\ud800"},"metadata":{"actor":"\u0000\u00e9"}}`,
		`{"ID":"01936f3c-1a2b-7c3d-8e4f-5a6b7c8d9e0f","Stream":"s","TYPE":"t","version":3,"revision":9,"position":18446744073709551615,"recorded_at":"2025-01-01T00:00:00Z","data":0}`,
		`{"id":"{01936f3c-1a2b-7c3d-8e4f-5a6b7c8d9e0f}","stream":"s\xff","type":"t","version":1,"revision":0,"position":1,"recorded_at":"2025-01-01T00:00:00Z","data":{}}`,
		`{"id":"urn:uuid:01936f3c-1a2b-7c3d-8e4f-5a6b7c8d9e0f","stream":"s","type":"t","type":"u","version":1,"revision":0,"position":1,"recorded_at":"2025-01-01T00:00:00Z","data":{}}`,
		head + `"recorded_at":"2025-01-01T00:00:00Z"}`,
		head + `"recorded_at":"2025-01-01T00:00:00Z","data":{},"revision":-1}`,
		`{"id":"00000000-0000-0000-0000-000000000000"}`,
		`{"stream":"$all"}`,
		`[]`,
		`null`,
		``,
		`{"data":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ev, err := eventstore.UnmarshalEnvelope(in)
		if err != nil {
			var ie *eventstore.InvalidEventError
			if !errors.As(err, &ie) || ie.Field == "" {
				t.Fatalf("UnmarshalEnvelope error %v (%T) is not an *InvalidEventError naming a field", err, err)
			}
			return
		}
		b, err := eventstore.MarshalEnvelope(ev)
		if err != nil {
			t.Fatalf("MarshalEnvelope refused a decoded envelope %+v: %v", ev, err)
		}
		again, err := eventstore.UnmarshalEnvelope(b)
		if err != nil {
			t.Fatalf("UnmarshalEnvelope refused its own encoding %q: %v", b, err)
		}
		if d := diffRecorded(ev, again); d != "" {
			t.Fatalf("round trip changed the event: %s\ninput: %q\nre-encoded: %q", d, in, b)
		}
		b2, err := eventstore.MarshalEnvelope(again)
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("encoding is not stable: %q then %q (%v)", b, b2, err)
		}
	})
}
