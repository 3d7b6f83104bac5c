package domain

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain/internal/plainjson"
)

// The hand-written codec of the hot events is held to encoding/json:
// MarshalEvent writes json.Marshal's bytes, and decodeSelf gives
// json.Unmarshal's value or error.

// codecStrings take every path of the string codec: plain, HTML-escaped,
// control characters, non-ASCII, U+2028, invalid UTF-8.
var codecStrings = []string{"", "alice", "train-1", "a<b>&c", "quote\"back\\slash", "tab\tnew\nline\x01\x7f",
	"naïve 東京", "line\u2028sep\u2029", "bad\xffutf8", "\xed\xa0\x80", "cr.io/pytorch:2.4", "🚀"}

// codecGen makes random hot events; plain ones have only what json.Marshal
// writes without escapes and amounts the decoder accepts, so they take
// the fast path.
type codecGen struct {
	rng   *rand.Rand
	plain bool
}

func (g codecGen) n(k int) int { return g.rng.IntN(k) }

func (g codecGen) str() string {
	if g.n(3) > 0 {
		s := codecStrings[g.n(len(codecStrings))]
		if g.plain && string(plainjson.AppendString(nil, s)) != `"`+s+`"` {
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
		if g.plain && string(plainjson.AppendString(nil, c)) != `"`+c+`"` {
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

// checkMarshal: MarshalEvent writes what json.Marshal writes, or fails
// alike; hot events are written by hand.
func checkMarshal(t *testing.T, e Event, hot bool) []byte {
	t.Helper()
	want, wantErr := json.Marshal(e)
	got, err := MarshalEvent(e)
	if (err != nil) != (wantErr != nil) || string(got) != string(want) {
		t.Fatalf("MarshalEvent(%#v):\n got %s (%v)\nwant %s (%v)", e, got, err, want, wantErr)
	}
	if _, ok := appendEventJSON(nil, e); ok != (hot && wantErr == nil) {
		t.Fatalf("%T: written by hand %v, want %v", e, ok, hot)
	}
	return want
}

// checkDecode: decodeSelf gives what json.Unmarshal gives, value and
// error, and reports whether the fast path took it.
func checkDecode[E Event, P interface {
	*E
	selfDecoding
	scan(*plainjson.Scanner) bool
}](t *testing.T, data []byte) (fast bool) {
	t.Helper()
	var got, want E
	err := P(&got).decodeSelf(data)
	wantErr := json.Unmarshal(data, &want)
	switch {
	case (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()):
		t.Fatalf("decode %T %q: error %v, json.Unmarshal's %v", got, data, err, wantErr)
	case err == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("decode %T %q:\n got %#v\nwant %#v", got, data, got, want)
	}
	var e E
	s := plainjson.Scanner{Data: data}
	s.Space()
	return P(&e).scan(&s) && s.End()
}

// decodeAny checks the decoding of data as the hot event e is.
func decodeAny(t *testing.T, e Event, data []byte) bool {
	t.Helper()
	switch e.(type) {
	case SessionRequested:
		return checkDecode[SessionRequested](t, data)
	case SessionPendingUpdated:
		return checkDecode[SessionPendingUpdated](t, data)
	case SessionScheduled:
		return checkDecode[SessionScheduled](t, data)
	case AgentRegistered:
		return checkDecode[AgentRegistered](t, data)
	case AgentAllocated:
		return checkDecode[AgentAllocated](t, data)
	}
	t.Fatalf("%T is not a hot event", e)
	return false
}

// TestHotEventsCodecIsEncodingJSON: random events, with every kind of
// string, encode as json.Marshal does and decode back as json.Unmarshal
// does; the plain ones take the fast path both ways.
func TestHotEventsCodecIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		g := codecGen{rng: rng, plain: i%2 == 0}
		e := g.event()
		data := checkMarshal(t, e, true)
		if data == nil {
			continue // refused alike
		}
		if fast := decodeAny(t, e, data); g.plain && !fast {
			t.Fatalf("%s %s: not decoded by the fast path", e.EventType(), data)
		}
		back, err := DecodeEvent(e.EventType(), SchemaVersion, data)
		if err != nil {
			continue // json.Unmarshal's error too (an amount that does not parse...)
		}
		if again := checkMarshal(t, back, true); g.plain && string(again) != string(data) {
			t.Fatalf("round trip:\n got %s\nwant %s", again, data)
		}
	}
}

// TestHotEventsDecodeShapes: what the fast path takes (spacing, key
// order, the forms of uuids, [] and {}) and what it leaves to
// encoding/json (escapes, other keys, repeats, null, other numbers,
// trailing data); either way the result is json.Unmarshal's.
func TestHotEventsDecodeShapes(t *testing.T) {
	const (
		kid  = `"0195a0c0-0000-7000-8000-0000000000a1"`
		when = `"2026-11-21T10:00:00.5+09:00"`
	)
	cases := []struct {
		e    Event
		in   string
		fast bool
	}{
		{SessionScheduled{}, `{}`, true},
		{SessionScheduled{}, " \n{ \"at\" : " + when + " ,\t\"reason\":\"ok\", \"kernels\" : [ ] } \r\n", true},
		{SessionScheduled{}, `{"kernels":[{"kernel_id":` + kid + `,"agent_id":"a","devices":[{"amount":"0.5","device_id":"GPU-1"}]}],"reason":"","at":` + when + `}`, true},
		{SessionScheduled{}, `{"kernels":[{"kernel_id":"urn:uuid:0195a0c0-0000-7000-8000-0000000000a1","devices":[]}]}`, true},
		{SessionScheduled{}, `{"kernels":[{"kernel_id":"{0195a0c0-0000-7000-8000-0000000000a1}"},{"kernel_id":"0195a0c000007000800000000000000a"}]}`, true},
		{SessionScheduled{}, `{"kernels":null}`, true},
		{SessionScheduled{}, `{"kernels":nul}`, false},
		{SessionScheduled{}, `{"kernels":nullx}`, false},
		{SessionScheduled{}, `{"kernels":[null]}`, false},
		{SessionScheduled{}, `{"kernels":[{"devices":null}]}`, true},
		{SessionScheduled{}, `{"Reason":"x"}`, false},
		{SessionScheduled{}, `{"reason":"a\"b"}`, false},
		{SessionScheduled{}, `{"reason":"\u00e9"}`, false},
		{SessionScheduled{}, `{"reason":"é"}`, true},
		{SessionScheduled{}, "{\"reason\":\"\xff\"}", false},
		{SessionScheduled{}, `{"reason":"a","reason":"b"}`, false},
		{SessionScheduled{}, `{"reason":"a"} x`, false},
		{SessionScheduled{}, `{"reason":"a"}{}`, false},
		{SessionScheduled{}, `{"reason":"a",}`, false},
		{SessionScheduled{}, `{"other":1}`, false},
		{SessionScheduled{}, `{"at":"2026-11-21 10:00:00Z"}`, false},
		{SessionScheduled{}, `{"at":"2026-11-21T10:00:00Z"}`, true},
		{SessionScheduled{}, `{"at":null}`, false},
		{SessionScheduled{}, `{"kernels":[{"kernel_id":"nope"}]}`, false},
		{SessionScheduled{}, `{"kernels":[{"devices":[{"device_id":"g","amount":"x"}]}]}`, false},
		{SessionScheduled{}, `{"kernels":[{"devices":[{"device_id":"g"}]}]}`, false},
		{SessionScheduled{}, `{"kernels":[{"devices":[{"device_id":"g","amount":"1","amount":"1"}]}]}`, false},
		{SessionScheduled{}, `[]`, false},
		{SessionScheduled{}, `null`, false},
		{SessionScheduled{}, ``, false},
		{SessionPendingUpdated{}, `{"reason":"r","details":["a","b"],"tries":3,"at":` + when + `}`, true},
		{SessionPendingUpdated{}, `{"details":[]}`, true},
		{SessionPendingUpdated{}, `{"tries":-0}`, true},
		{SessionPendingUpdated{}, `{"tries":1.0}`, false},
		{SessionPendingUpdated{}, `{"tries":1e2}`, false},
		{SessionPendingUpdated{}, `{"tries":01}`, false},
		{SessionPendingUpdated{}, `{"tries":99999999999999999999}`, false},
		{SessionPendingUpdated{}, `{"tries":"1"}`, false},
		{SessionPendingUpdated{}, `{"details":[null]}`, false},
		{SessionRequested{}, `{"env":{"A":"1","A":"2"},"mounts":[],"dependencies":[],"kernels":[{"role":"main","slots":{}}]}`, true},
		{SessionRequested{}, `{"env":{},"kernels":[{"slots":{"cpu":"1","mem":"1g"}}],"starts_at":` + when + `}`, true},
		{SessionRequested{}, `{"kernels":[{"slots":{ "cpu" : "1" }}]}`, true},
		{SessionRequested{}, `{"kernels":[{"slots":{"cpu":1}}]}`, false},
		{SessionRequested{}, `{"kernels":[{"slots":{"cpu":"1","cpu":"2"}}]}`, false},
		{SessionRequested{}, `{"kernels":[{"slots":{"bogus":"1"}}]}`, false},
		{SessionRequested{}, `{"kernels":[{"slots":null}]}`, false},
		{SessionRequested{}, `{"owner":{"user_id":"u","access_key":"k"},"priority":-5}`, true},
		{SessionRequested{}, `{"owner":{"user_id":"u","extra":1}}`, false},
		{SessionRequested{}, `{"dependencies":[` + kid + `,` + kid + `]}`, true},
		{AgentRegistered{}, `{"agent_id":"i-1","capacity":{"cpu":"64"},"devices":[{"id":"GPU-1","kind":"cuda.device","model":"A100","memory":85899345920}]}`, true},
		{AgentRegistered{}, `{"devices":[{"id":"GPU-1","memory":1.5}]}`, false},
		{AgentRegistered{}, `{"devices":[{"id":"GPU-1","memory":9223372036854775808}]}`, false},
		{AgentAllocated{}, `{"kernel_id":` + kid + `,"session_id":` + kid + `,"slots":{"cuda.shares":"0.5"},"devices":[{"device_id":"GPU-1","amount":"0.5"}]}`, true},
		{AgentAllocated{}, `{"devices":[{"device_id":"GPU-1","amount":"-1"}]}`, false},
	}
	for _, c := range cases {
		if got := decodeAny(t, c.e, []byte(c.in)); got != c.fast {
			t.Errorf("%s %s: fast path %v, want %v", c.e.EventType(), c.in, got, c.fast)
		}
	}
}

// TestMarshalEventOthers: events not written by hand are json.Marshal's,
// errors included.
func TestMarshalEventOthers(t *testing.T) {
	for _, e := range []Event{
		SessionTerminated{Reason: "done<>", ExitCode: intp(3), At: at(1)},
		&SessionScheduled{Reason: "pointer"},
		AgentReleased{At: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
		SessionScheduled{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600))},
	} {
		checkMarshal(t, e, false)
	}
}

// fuzzSeeds adds real encodings of random events of one kind, and a few
// that leave the fast path.
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
			checkMarshal(t, e, true)
		case SessionPendingUpdated:
			e.Reason, e.Details = s1, []string{s2}
			checkMarshal(t, e, true)
		case SessionScheduled:
			e.Reason = s1
			e.Kernels = append(e.Kernels, KernelPlacement{AgentID: s2, Devices: []DeviceShare{{DeviceID: s1}}})
			checkMarshal(t, e, true)
		case AgentRegistered:
			e.AgentID, e.Capacity = s1, Slots{SlotName(s2): 1, SlotName(s1): 2}
			checkMarshal(t, e, true)
		case AgentAllocated:
			e.Devices = []DeviceShare{{DeviceID: s1}, {DeviceID: s2}}
			checkMarshal(t, e, true)
		}
	})
}

// TestCodecWritesEveryField: a hot event with every field set (found by
// reflection, so a field added later is set too) encodes to json.Marshal's
// bytes and decodes back through the fast path to the same value. A field
// the hand-written codec does not know fails here, instead of being
// dropped from the log.
func TestCodecWritesEveryField(t *testing.T) {
	for _, e := range []Event{&SessionRequested{}, &SessionPendingUpdated{}, &SessionScheduled{}, &AgentRegistered{}, &AgentAllocated{}} {
		v := reflect.ValueOf(e).Elem()
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
		back := reflect.New(v.Type())
		sc := plainjson.Scanner{Data: got}
		if !back.Interface().(interface{ scan(*plainjson.Scanner) bool }).scan(&sc) || !sc.End() {
			t.Errorf("%T with every field set: the fast path refuses %s", ev, got)
			continue
		}
		if !reflect.DeepEqual(back.Elem().Interface(), ev) {
			t.Errorf("%T with every field set decodes to %+v, want %+v", ev, back.Elem().Interface(), ev)
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
			fillEvery(t, v.Field(i))
		}
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
