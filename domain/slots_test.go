package domain

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"testing"
)

func TestParseQuantity(t *testing.T) {
	cases := []struct {
		in   string
		typ  SlotType
		want Quantity
		bad  bool
	}{
		{"4", SlotCount, 4000, false},
		{"0.5", SlotCount, 500, false},
		{"0.25", SlotCount, 250, false},
		{"0.001", SlotCount, 1, false},
		{"1.2500", SlotCount, 1250, false},
		{"0.0001", SlotCount, 0, true},
		{"-1", SlotCount, 0, true},
		{"+1", SlotCount, 0, true},
		{"1e3", SlotCount, 0, true},
		{"NaN", SlotCount, 0, true},
		{"", SlotCount, 0, true},
		{".5", SlotCount, 0, true},
		{"5.", SlotCount, 0, true},
		{"abc", SlotCount, 0, true},
		{"99999999999999999999", SlotCount, 0, true},
		{"64m", SlotBytes, 64 << 20 * 1000, false},
		{"64MiB", SlotBytes, 64 << 20 * 1000, false},
		{"1.5g", SlotBytes, 3 << 29 * 1000, false},
		{"67108864", SlotBytes, 67108864 * 1000, false},
		{"1.5", SlotBytes, 0, true},
		{"1x", SlotBytes, 0, true},
		{"-64m", SlotBytes, 0, true},
		{"9000p", SlotBytes, 0, true},
		{"1", SlotUnique, 1000, false},
		{"7", SlotUnique, 7000, false}, // a capacity: seven MIG devices of a profile
		{"0.5", SlotUnique, 0, true},
	}
	for _, c := range cases {
		got, err := ParseQuantity(c.in, c.typ)
		if c.bad {
			if err == nil {
				t.Errorf("ParseQuantity(%q) = %v, want an error", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseQuantity(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestQuantityString(t *testing.T) {
	for q, want := range map[Quantity]string{4000: "4", 500: "0.5", 250: "0.25", 1: "0.001", -1500: "-1.5", 0: "0",
		10: "0.01", 1050: "1.05", 1001: "1.001", -7: "-0.007", math.MaxInt64: "9223372036854775.807", math.MinInt64: "-9223372036854775.808",
	} {
		if got := q.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(q), got, want)
		}
	}
}

func TestSlotsJSON(t *testing.T) {
	var s Slots
	if err := json.Unmarshal([]byte(`{"cpu": 1.5, "mem": "64m", "cuda.shares": "0.25"}`), &s); err != nil {
		t.Fatal(err)
	}
	want := Slots{SlotCPU: 1500, SlotMem: Quantity(64 << 20 * 1000), SlotCUDAShares: 250}
	for k, v := range want {
		if s[k] != v {
			t.Errorf("%s = %v, want %v", k, s[k], v)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Slots
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 3 || back[SlotMem] != s[SlotMem] {
		t.Fatalf("round trip %s: %v %v", b, back, err)
	}

	for in, field := range map[string]string{
		`{"gpu": 1}`:      "gpu",
		`{"cpu": -1}`:     "cpu",
		`{"mem": "lots"}`: "mem",
		`{"cpu": true}`:   "cpu",
	} {
		err := json.Unmarshal([]byte(in), &s)
		var de *Error
		if !errors.As(err, &de) || de.Kind != KindInvalid || de.Field != field {
			t.Errorf("%s: got %v, want an invalid error naming %q", in, err, field)
		}
	}
}

func TestSlotsArithmetic(t *testing.T) {
	capacity := Slots{SlotCPU: Units(8), SlotMem: Units(1 << 30)}
	req := Slots{SlotCPU: Units(2), SlotMem: Units(1 << 29)}
	if !req.FitsIn(capacity) {
		t.Fatal("should fit")
	}
	free := capacity.Sub(req).Sub(req).Sub(req)
	if req.FitsIn(free) {
		t.Fatalf("should not fit in %v", free)
	}
	if got := req.Exceeding(free); len(got) != 1 || got[0] != SlotMem {
		t.Fatalf("Exceeding = %v", got)
	}
	if got := (Slots{SlotCUDADevice: Units(1)}).Exceeding(capacity); len(got) != 1 || got[0] != SlotCUDADevice {
		t.Fatalf("a slot missing from capacity holds zero: %v", got)
	}
	if !capacity.Sub(capacity).IsZero() {
		t.Fatal("IsZero")
	}
	if !IsMIGSlot("cuda.device:1g.10gb-mig") || IsMIGSlot("cuda.device:-mig") || !IsAccelerator(SlotCUDAShares) || IsAccelerator(SlotMem) {
		t.Fatal("slot classification")
	}
}

// TestQuantityFastPathIsExact: the int64 fast path gives what exact
// rational arithmetic gives, whenever it answers.
func TestQuantityFastPathIsExact(t *testing.T) {
	t.Parallel()
	ints := []string{"0", "1", "7", "10", "999", "1024", "123456789012345", "9223372036854", "9223372036854775", "000001"}
	fracs := []string{"", "0", "5", "25", "125", "500", "001", "1250", "0000"}
	mults := []int64{1, 1 << 10, 1 << 20, 1 << 30, 1 << 40, 1 << 50}
	for _, typ := range []SlotType{SlotCount, SlotBytes, SlotUnique} {
		for _, in := range ints {
			for _, fr := range fracs {
				for _, mult := range mults {
					if typ != SlotBytes && mult != 1 {
						continue
					}
					fast, ok := quantityFast(in, fr, mult, typ)
					if !ok {
						continue
					}
					exact, err := quantityExact(in+"."+fr, in, fr, mult, typ)
					if err != nil || exact != fast {
						t.Errorf("%s.%s x%d (%v): fast %d, exact %d (%v)", in, fr, mult, typ, fast, exact, err)
					}
				}
			}
		}
	}
}

// FuzzSlotsUnmarshalJSON: UnmarshalJSON (amounts as MarshalJSON writes
// them parsed as they come, the others left to ParseSlots) gives what the
// general path gives (encoding/json into raw members, then ParseSlots):
// the same slots, or the same error.
func FuzzSlotsUnmarshalJSON(f *testing.F) {
	for _, s := range []string{
		`{"cpu":"2","mem":"1073741824","cuda.shares":"0.5"}`, `{}`, `{"cpu":"1","cpu":"2"}`, `{"cpu":"1",}`, `null`, `[]`, `"cpu"`,
		`{"cpu":1}`, `{"cpu":"1"}}`, `{"bogus":"1"}`, `{"cpu":"x"}`, `{"cuda.device:3g.40gb-mig":"1"}`, `{"cpu":"\u0031"}`, `{ "cpu":"1"}`,
		`{"cpu":"1","\u0063pu":"x"}`, `{"cpu":"x","cpu":"1"}`, "{\"\xff\":\"1\"}", `{"mem":"1g","cpu":2.5,"cuda.mem":"1.5"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got Slots
		err := got.UnmarshalJSON(b)
		var want Slots
		var wantErr error
		var raw map[string]json.RawMessage
		if wantErr = json.Unmarshal(b, &raw); wantErr != nil {
			wantErr = Invalid("", "", "resource slots must be an object of slot name to amount")
		} else {
			want, wantErr = ParseSlots(raw)
		}
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("%q: error %v, the general path's %v", b, err, wantErr)
		}
		if err == nil && !maps.Equal(got, want) {
			t.Fatalf("%q: %v, the general path %v", b, got, want)
		}
		if err != nil && KindOf(err) != KindInvalid {
			t.Fatalf("%q: %v is not KindInvalid", b, err)
		}
	})
}

// TestSlotsRoundTrip: MarshalJSON writes names sorted and amounts as
// decimal strings (the bytes stored events hold), and UnmarshalJSON
// reads them back.
func TestSlotsRoundTrip(t *testing.T) {
	in := Slots{SlotCPU: Units(2), SlotMem: gib(3), SlotCUDAShares: q("0.25"), SlotName("cuda.device:3g.40gb-mig"): Units(1)}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const golden = `{"cpu":"2","cuda.device:3g.40gb-mig":"1","cuda.shares":"0.25","mem":"3221225472"}`
	if string(b) != golden {
		t.Fatalf("MarshalJSON: %s, want %s", b, golden)
	}
	var got Slots
	if err := json.Unmarshal(b, &got); err != nil || !maps.Equal(got, in) {
		t.Fatalf("%s: read back %v, %v", b, got, err)
	}
	if b, err := json.Marshal(Slots(nil)); err != nil || string(b) != `{}` {
		t.Fatalf("nil slots: %s, %v", b, err)
	}
}

// FuzzParseAmount: parseAmount is ParseQuantity, amount and error.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"0", "4", "0.5", "0.25", "0.001", "0.0005", "1.", ".5", "007", "1.0", "123456789012345", "1234567890123456",
		"9223372036854775807", "64m", " 1", "-1", "+1", "1e3", "0x10", "1.5a", "", "1.2345"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, typ uint8) {
		st := SlotType(typ % 3)
		got, err := parseAmount([]byte(s), st)
		want, wantErr := ParseQuantity(s, st)
		if got != want || (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("parseAmount(%q, %d) = %d, %v; ParseQuantity: %d, %v", s, st, got, err, want, wantErr)
		}
	})
}
