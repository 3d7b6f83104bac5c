package domain

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"
)

// Event payloads are written and read by go-json-experiment/json with
// encoding/json's semantics (jsonOptions), held here to encoding/json
// itself: MarshalEvent writes json.Marshal's bytes, and DecodeEvent gives
// json.Unmarshal's value, or fails where it fails. The scheduler's hot
// events (a session's request, pending updates and placement, an agent's
// registration and allocations), read thousands of times a scheduling
// pass, are the ones tested hardest.

// codecStrings take every path of the string codec: plain, HTML-escaped,
// control characters, non-ASCII, U+2028, invalid UTF-8.
var codecStrings = []string{"", "alice", "train-1", "a<b>&c", "quote\"back\\slash", "tab\tnew\nline\x01\x7f",
	"naïve 東京", "line\u2028sep\u2029", "bad\xffutf8", "\xed\xa0\x80", "cr.io/pytorch:2.4", "🚀"}

// codecGen makes random hot events; plain ones have only strings
// json.Marshal writes without escapes and amounts that decode.
type codecGen struct {
	rng   *rand.Rand
	plain bool
}

func (g codecGen) n(k int) int { return g.rng.IntN(k) }

func (g codecGen) str() string {
	if g.n(3) > 0 {
		s := codecStrings[g.n(len(codecStrings))]
		if g.plain && !plainString(s) {
			return "plain"
		}
		return s
	}
	var b strings.Builder
	for range g.n(8) {
		var c string
		switch g.n(3) {
		case 0:
			c = string(rune(0x20 + g.n(0x60)))
		case 1:
			c = string(g.rng.Int32N(0x110000)) // surrogates become U+FFFD
		default:
			c = string([]byte{byte(g.rng.Uint32())}) // maybe invalid UTF-8
		}
		if g.plain && !plainString(c) {
			c = "x"
		}
		b.WriteString(c)
	}
	return b.String()
}

func (g codecGen) uuid() uuid.UUID {
	var u uuid.UUID
	for i := range u {
		u[i] = byte(g.rng.Uint32())
	}
	return u
}

func (g codecGen) time() time.Time {
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("", 9*3600), time.FixedZone("JST", 9*3600),
		time.FixedZone("", -(3*3600 + 30*60)), time.FixedZone("", 3600+7)}
	switch g.n(40) {
	case 0:
		return time.Time{}
	case 1:
		if !g.plain {
			return time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) // json.Marshal refuses it
		}
	}
	t := time.Unix(g.rng.Int64N(1<<33)-1<<31, g.rng.Int64N(1e9)*int64(g.n(2)))
	return t.In(zones[g.n(len(zones))])
}

func (g codecGen) quantity(t SlotType) Quantity {
	switch {
	case !g.plain && g.n(4) == 0:
		return Quantity(g.rng.Int64() >> g.n(64) * int64(1-2*g.n(2)))
	case t == SlotCount:
		return Quantity(g.rng.Int64N(1 << 20))
	}
	return Units(g.rng.Int64N(1 << 40))
}

func (g codecGen) slots() Slots {
	if g.n(8) == 0 {
		return nil
	}
	names := []SlotName{SlotCPU, SlotMem, SlotCUDAShares, SlotCUDADevice, SlotCUDAMem, "rocm.device", "cuda.device:1g.10gb-mig"}
	s := Slots{}
	for range g.n(5) {
		name := names[g.n(len(names))]
		if !g.plain && g.n(6) == 0 {
			name = SlotName(g.str()) // encodes; does not decode
		}
		t, _ := SlotTypeOf(name)
		s[name] = g.quantity(t)
	}
	return s
}

// slice makes nil, empty or a few elements.
func slice[T any](g codecGen, elem func() T) []T {
	switch g.n(3) {
	case 0:
		return nil
	case 1:
		return []T{}
	}
	out := make([]T, 1+g.n(3))
	for i := range out {
		out[i] = elem()
	}
	return out
}

func (g codecGen) shares() []DeviceShare {
	return slice(g, func() DeviceShare { return DeviceShare{DeviceID: g.str(), Amount: g.quantity(SlotCount)} })
}

func (g codecGen) sessionRequested() SessionRequested {
	e := SessionRequested{
		SessionID: g.uuid(), Name: g.str(), Owner: Owner{UserID: g.str(), AccessKey: g.str()},
		Domain: g.str(), Project: g.str(), ResourceGroup: g.str(), Type: SessionType(g.str()), Image: g.str(),
		Command: g.str(), Priority: g.rng.IntN(200) - 100, ClusterMode: ClusterMode(g.str()),
		Kernels: slice(g, func() KernelSpec { return KernelSpec{KernelID: g.uuid(), Role: KernelRole(g.str()), Slots: g.slots()} }),
		Mounts: slice(g, func() VFolderMount {
			return VFolderMount{FolderID: g.str(), Name: g.str(), Host: g.str(), Path: g.str(), Permission: VFolderPermission(g.str())}
		}),
		At: g.time(), Dependencies: slice(g, g.uuid), Architecture: g.str(),
	}
	if g.n(2) == 0 {
		e.StartsAt = g.time()
	}
	if g.n(4) == 0 {
		e.Priority = g.rng.Int() * (1 - 2*g.n(2))
	}
	switch g.n(3) {
	case 0:
		e.Env = map[string]string{}
	case 1:
		e.Env = map[string]string{g.str(): g.str(), g.str(): g.str(), "PATH": g.str()}
	}
	return e
}

func (g codecGen) sessionPendingUpdated() SessionPendingUpdated {
	return SessionPendingUpdated{Reason: g.str(), Details: slice(g, g.str), Tries: g.rng.IntN(1000), At: g.time()}
}

func (g codecGen) sessionScheduled() SessionScheduled {
	return SessionScheduled{
		Kernels: slice(g, func() KernelPlacement {
			return KernelPlacement{KernelID: g.uuid(), AgentID: g.str(), Devices: g.shares()}
		}),
		Reason: g.str(), At: g.time(),
	}
}

func (g codecGen) agentRegistered() AgentRegistered {
	return AgentRegistered{
		AgentID: g.str(), Architecture: g.str(), Capacity: g.slots(),
		Devices: slice(g, func() Device {
			return Device{ID: g.str(), Kind: SlotName(g.str()), Model: g.str(), Memory: g.rng.Int64() >> g.n(64) * int64(g.n(2))}
		}),
		SealKey: g.str(),
		At:      g.time(),
	}
}

func (g codecGen) agentAllocated() AgentAllocated {
	return AgentAllocated{KernelID: g.uuid(), SessionID: g.uuid(), Slots: g.slots(), Devices: g.shares(), At: g.time()}
}

// event makes one of the five hot events.
func (g codecGen) event() Event {
	switch g.n(5) {
	case 0:
		return g.sessionRequested()
	case 1:
		return g.sessionPendingUpdated()
	case 2:
		return g.sessionScheduled()
	case 3:
		return g.agentRegistered()
	}
	return g.agentAllocated()
}

// plainString reports whether json.Marshal writes s without escapes.
func plainString(s string) bool {
	b, err := json.Marshal(s)
	return err == nil && string(b) == `"`+s+`"`
}

// checkMarshal: MarshalEvent writes what json.Marshal writes, or fails
// where it fails. One spelling differs: invalid UTF-8 becomes U+FFFD in
// both, which encoding/json writes as its escape \ufffd and MarshalEvent
// as itself (the same string to every reader, the old codec's included).
func checkMarshal(t *testing.T, e Event) []byte {
	t.Helper()
	want, wantErr := json.Marshal(e)
	got, err := MarshalEvent(e)
	if (err != nil) != (wantErr != nil) || (err != nil && got != nil) {
		t.Fatalf("MarshalEvent(%#v): %q, error %v; json.Marshal's %v", e, got, err, wantErr)
	}
	if err != nil {
		return nil
	}
	if string(got) != string(want) {
		canon := jsontext.Value(bytes.Clone(want))
		if err := canon.Format(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true), jsontext.EscapeForHTML(true), jsontext.EscapeForJS(true)); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(canon) {
			t.Fatalf("MarshalEvent(%#v):\n got %s\nwant %s", e, got, want)
		}
	}
	return got
}

// checkDecode: DecodeEvent gives the value json.Unmarshal gives, or fails
// where it fails (the wording of errors is the library's).
func checkDecode[E Event](t *testing.T, data []byte) {
	t.Helper()
	var zero, want E
	got, err := DecodeEvent(zero.EventType(), SchemaVersion, data)
	wantErr := json.Unmarshal(data, &want)
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("decode %T %q: error %v, json.Unmarshal's %v", zero, data, err, wantErr)
	case err == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("decode %T %q:\n got %#v\nwant %#v", zero, data, got, want)
	}
}

// decodeAny checks the decoding of data as the hot event e is.
func decodeAny(t *testing.T, e Event, data []byte) {
	t.Helper()
	switch e.(type) {
	case SessionRequested:
		checkDecode[SessionRequested](t, data)
	case SessionPendingUpdated:
		checkDecode[SessionPendingUpdated](t, data)
	case SessionScheduled:
		checkDecode[SessionScheduled](t, data)
	case AgentRegistered:
		checkDecode[AgentRegistered](t, data)
	case AgentAllocated:
		checkDecode[AgentAllocated](t, data)
	default:
		t.Fatalf("%T is not a hot event", e)
	}
}

// TestHotEventsCodecIsEncodingJSON: random events, with every kind of
// string, encode as json.Marshal does and decode back as json.Unmarshal
// does, and the plain ones round-trip to the same bytes.
func TestHotEventsCodecIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		g := codecGen{rng: rng, plain: i%2 == 0}
		e := g.event()
		data := checkMarshal(t, e)
		if data == nil {
			continue // refused alike
		}
		decodeAny(t, e, data)
		back, err := DecodeEvent(e.EventType(), SchemaVersion, data)
		if err != nil {
			continue // json.Unmarshal's error too (an amount that does not parse...)
		}
		if again := checkMarshal(t, back); g.plain && string(again) != string(data) {
			t.Fatalf("round trip:\n got %s\nwant %s", again, data)
		}
	}
}

// TestHotEventsDecodeShapes: spacing, key order, the forms of uuids, []
// and {}, escapes, other keys and cases, repeats, null, other numbers,
// trailing data: the result is json.Unmarshal's.
func TestHotEventsDecodeShapes(t *testing.T) {
	const (
		kid  = `"0195a0c0-0000-7000-8000-0000000000a1"`
		when = `"2026-11-21T10:00:00.5+09:00"`
	)
	cases := []struct {
		e  Event
		in string
	}{
		{SessionScheduled{}, `{}`},
		{SessionScheduled{}, " \n{ \"at\" : " + when + " ,\t\"reason\":\"ok\", \"kernels\" : [ ] } \r\n"},
		{SessionScheduled{}, `{"kernels":[{"kernel_id":` + kid + `,"agent_id":"a","devices":[{"amount":"0.5","device_id":"GPU-1"}]}],"reason":"","at":` + when + `}`},
		{SessionScheduled{}, `{"kernels":[{"kernel_id":"urn:uuid:0195a0c0-0000-7000-8000-0000000000a1","devices":[]}]}`},
		{SessionScheduled{}, `{"kernels":[{"kernel_id":"{0195a0c0-0000-7000-8000-0000000000a1}"},{"kernel_id":"0195a0c000007000800000000000000a"}]}`},
		{SessionScheduled{}, `{"kernels":null}`},
		{SessionScheduled{}, `{"kernels":nul}`},
		{SessionScheduled{}, `{"kernels":nullx}`},
		{SessionScheduled{}, `{"kernels":[null]}`},
		{SessionScheduled{}, `{"kernels":[{"devices":null}]}`},
		{SessionScheduled{}, `{"Reason":"x"}`},
		{SessionScheduled{}, `{"reason":"a\"b"}`},
		{SessionScheduled{}, `{"reason":"\u00e9"}`},
		{SessionScheduled{}, `{"reason":"é"}`},
		{SessionScheduled{}, "{\"reason\":\"\xff\"}"},
		{SessionScheduled{}, `{"reason":"a","reason":"b"}`},
		{SessionScheduled{}, `{"reason":"a"} x`},
		{SessionScheduled{}, `{"reason":"a"}{}`},
		{SessionScheduled{}, `{"reason":"a",}`},
		{SessionScheduled{}, `{"other":1}`},
		{SessionScheduled{}, `{"at":"2026-11-21 10:00:00Z"}`},
		{SessionScheduled{}, `{"at":"2026-11-21T10:00:00Z"}`},
		{SessionScheduled{}, `{"at":null}`},
		{SessionScheduled{}, `{"kernels":[{"kernel_id":"nope"}]}`},
		{SessionScheduled{}, `{"kernels":[{"devices":[{"device_id":"g","amount":"x"}]}]}`},
		{SessionScheduled{}, `{"kernels":[{"devices":[{"device_id":"g"}]}]}`},
		{SessionScheduled{}, `{"kernels":[{"devices":[{"device_id":"g","amount":"1","amount":"1"}]}]}`},
		{SessionScheduled{}, `[]`},
		{SessionScheduled{}, `null`},
		{SessionScheduled{}, ``},
		{SessionPendingUpdated{}, `{"reason":"r","details":["a","b"],"tries":3,"at":` + when + `}`},
		{SessionPendingUpdated{}, `{"details":[]}`},
		{SessionPendingUpdated{}, `{"tries":-0}`},
		{SessionPendingUpdated{}, `{"tries":1.0}`},
		{SessionPendingUpdated{}, `{"tries":1e2}`},
		{SessionPendingUpdated{}, `{"tries":01}`},
		{SessionPendingUpdated{}, `{"tries":99999999999999999999}`},
		{SessionPendingUpdated{}, `{"tries":"1"}`},
		{SessionPendingUpdated{}, `{"details":[null]}`},
		{SessionRequested{}, `{"env":{"A":"1","A":"2"},"mounts":[],"dependencies":[],"kernels":[{"role":"main","slots":{}}]}`},
		{SessionRequested{}, `{"env":{},"kernels":[{"slots":{"cpu":"1","mem":"1g"}}],"starts_at":` + when + `}`},
		{SessionRequested{}, `{"kernels":[{"slots":{ "cpu" : "1" }}]}`},
		{SessionRequested{}, `{"kernels":[{"slots":{"cpu":1}}]}`},
		{SessionRequested{}, `{"kernels":[{"slots":{"cpu":"1","cpu":"2"}}]}`},
		{SessionRequested{}, `{"kernels":[{"slots":{"bogus":"1"}}]}`},
		{SessionRequested{}, `{"kernels":[{"slots":null}]}`},
		{SessionRequested{}, `{"owner":{"user_id":"u","access_key":"k"},"priority":-5}`},
		{SessionRequested{}, `{"owner":{"user_id":"u","extra":1}}`},
		{SessionRequested{}, `{"dependencies":[` + kid + `,` + kid + `]}`},
		{AgentRegistered{}, `{"agent_id":"i-1","capacity":{"cpu":"64"},"devices":[{"id":"GPU-1","kind":"cuda.device","model":"A100","memory":85899345920}]}`},
		{AgentRegistered{}, `{"devices":[{"id":"GPU-1","memory":1.5}]}`},
		{AgentRegistered{}, `{"devices":[{"id":"GPU-1","memory":9223372036854775808}]}`},
		{AgentAllocated{}, `{"kernel_id":` + kid + `,"session_id":` + kid + `,"slots":{"cuda.shares":"0.5"},"devices":[{"device_id":"GPU-1","amount":"0.5"}]}`},
		{AgentAllocated{}, `{"devices":[{"device_id":"GPU-1","amount":"-1"}]}`},
	}
	for _, c := range cases {
		decodeAny(t, c.e, []byte(c.in))
	}
}

// TestMarshalEventOthers: other events, pointers and times json.Marshal
// refuses are json.Marshal's, errors included.
func TestMarshalEventOthers(t *testing.T) {
	for _, e := range []Event{
		SessionTerminated{Reason: "done<>", ExitCode: intp(3), At: at(1)},
		&SessionScheduled{Reason: "pointer"},
		AgentReleased{At: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
		SessionScheduled{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600))},
	} {
		checkMarshal(t, e)
	}
}

// fuzzSeeds adds real encodings of random events of one kind, and a few
// odd shapes.
func fuzzSeeds(f *testing.F, kind func(codecGen) Event) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 16 {
		b, err := json.Marshal(kind(codecGen{rng: rng, plain: i%4 != 0}))
		if err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{`{}`, ` { } `, `null`, `{"at":null}`, `{"reason":"a","reason":"b"}`, `{"Reason":"\u0041"}`, "{\"agent_id\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
}

func FuzzDecodeSessionRequested(f *testing.F) {
	fuzzSeeds(f, func(g codecGen) Event { return g.sessionRequested() })
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode[SessionRequested](t, data) })
}

func FuzzDecodeSessionPendingUpdated(f *testing.F) {
	fuzzSeeds(f, func(g codecGen) Event { return g.sessionPendingUpdated() })
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode[SessionPendingUpdated](t, data) })
}

func FuzzDecodeSessionScheduled(f *testing.F) {
	fuzzSeeds(f, func(g codecGen) Event { return g.sessionScheduled() })
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode[SessionScheduled](t, data) })
}

func FuzzDecodeAgentRegistered(f *testing.F) {
	fuzzSeeds(f, func(g codecGen) Event { return g.agentRegistered() })
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode[AgentRegistered](t, data) })
}

func FuzzDecodeAgentAllocated(f *testing.F) {
	fuzzSeeds(f, func(g codecGen) Event { return g.agentAllocated() })
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode[AgentAllocated](t, data) })
}

// FuzzMarshalEvent: random hot events, with the fuzzer's strings in them,
// encode as json.Marshal does.
func FuzzMarshalEvent(f *testing.F) {
	for i, s := range codecStrings {
		f.Add(uint64(i), s, codecStrings[len(codecStrings)-1-i])
	}
	f.Fuzz(func(t *testing.T, seed uint64, s1, s2 string) {
		rng := rand.New(rand.NewPCG(seed, 7))
		g := codecGen{rng: rng}
		e := g.event()
		switch e := e.(type) {
		case SessionRequested:
			e.Name, e.Env = s1, map[string]string{s1: s2, s2: s1}
			checkMarshal(t, e)
		case SessionPendingUpdated:
			e.Reason, e.Details = s1, []string{s2}
			checkMarshal(t, e)
		case SessionScheduled:
			e.Reason = s1
			e.Kernels = append(e.Kernels, KernelPlacement{AgentID: s2, Devices: []DeviceShare{{DeviceID: s1}}})
			checkMarshal(t, e)
		case AgentRegistered:
			e.AgentID, e.Capacity = s1, Slots{SlotName(s2): 1, SlotName(s1): 2}
			checkMarshal(t, e)
		case AgentAllocated:
			e.Devices = []DeviceShare{{DeviceID: s1}, {DeviceID: s2}}
			checkMarshal(t, e)
		}
	})
}

// TestCodecWritesEveryField: every event type with every field set
// (found by reflection, so a field added later is set too) encodes to
// json.Marshal's bytes and decodes back to the same value: a field the
// codec's options would drop or garble fails here, instead of being lost
// from the log.
func TestCodecWritesEveryField(t *testing.T) {
	for name := range registry {
		zero, err := DecodeEvent(name, SchemaVersion, []byte(`{}`))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		v := reflect.New(reflect.TypeOf(zero)).Elem()
		fillEvery(t, v)
		ev := v.Interface().(Event)
		want, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := MarshalEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%T with every field set:\n got  %s\n want %s", ev, got, want)
			continue
		}
		back, err := DecodeEvent(name, SchemaVersion, got)
		if err != nil {
			t.Errorf("%T with every field set: %s does not decode: %v", ev, got, err)
			continue
		}
		bv := reflect.New(v.Type()).Elem()
		bv.Set(reflect.ValueOf(back))
		clearUnencoded(bv)
		if !reflect.DeepEqual(bv.Interface(), ev) {
			t.Errorf("%T with every field set decodes to %+v, want %+v", ev, back, ev)
		}
	}
}

// clearUnencoded zeroes the fields of v that JSON leaves out (json:"-"),
// which decoding may fill from elsewhere (a sealed record's raw bytes).
func clearUnencoded(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && f.Tag.Get("json") == "-" {
				v.Field(i).SetZero()
			} else if f.IsExported() {
				clearUnencoded(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			clearUnencoded(v.Index(i))
		}
	}
}

// fillEvery sets every field of v to a non-zero value the codec can hold
// (strings plain, amounts whole, slot names known).
func fillEvery(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Interface().(type) {
	case time.Time:
		v.Set(reflect.ValueOf(time.Date(2026, 11, 21, 13, 0, 0, 500, time.UTC)))
		return
	case uuid.UUID:
		v.Set(reflect.ValueOf(uuid.MustParse("01234567-89ab-7def-8123-456789abcdef")))
		return
	case Slots:
		v.Set(reflect.ValueOf(Slots{SlotCPU: Units(2), SlotCUDAShares: Units(1)}))
		return
	case Quantity:
		v.Set(reflect.ValueOf(Units(1)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(3)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				t.Fatalf("%s has an unexported field %s: teach fillEvery", v.Type(), v.Type().Field(i).Name)
			}
			if v.Type().Field(i).Tag.Get("json") != "-" {
				fillEvery(t, v.Field(i))
			}
		}
	case reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		v.SetUint(3)
	case reflect.Array:
		for i := range v.Len() {
			fillEvery(t, v.Index(i))
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillEvery(t, v.Elem())
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillEvery(t, s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillEvery(t, k)
		fillEvery(t, e)
		m.SetMapIndex(k, e)
		v.Set(m)
	default:
		t.Fatalf("%s: teach fillEvery the kind %s", v.Type(), v.Kind())
	}
}

// TestHotEventsGolden: payloads as the hand-written codec this one
// replaced wrote them (testdata/hot_events_golden.tsv: event type, stored
// bytes, and what that codec wrote again after reading them, or "error"
// where it refused them) read and write back to the same bytes: events
// already in stores decode as they did, and what is written now is what
// was written then (which older builds read).
func TestHotEventsGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/hot_events_golden.tsv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) < 400 {
		t.Fatalf("%d golden payloads, want 400 or more", len(lines))
	}
	for i, line := range lines {
		typ, rest, _ := strings.Cut(line, "\t")
		stored, again, ok := strings.Cut(rest, "\t")
		if !ok {
			t.Fatalf("line %d: %q is not type, payload, rewritten", i+1, line)
		}
		if stored == "error" {
			continue // json.Marshal refused the event: nothing was stored
		}
		e, err := DecodeEvent(typ, SchemaVersion, []byte(stored))
		if again == "error" {
			if err == nil {
				t.Errorf("line %d: %s %s decodes, the old codec refused it", i+1, typ, stored)
			}
			continue
		}
		if err != nil {
			t.Errorf("line %d: %s %s: %v", i+1, typ, stored, err)
			continue
		}
		got, err := MarshalEvent(e)
		if err != nil || string(got) != again {
			t.Errorf("line %d: %s %s written back as\n %s (%v)\nwant\n %s", i+1, typ, stored, got, err, again)
		}
	}
}
