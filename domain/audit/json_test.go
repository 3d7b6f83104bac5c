package audit

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// strs are strings that take every path of the codec: plain ASCII,
// HTML-escaped, control, non-ASCII, U+2028 and invalid UTF-8.
var strs = []string{"", "alice", "GET /v1/sessions/:id", "a<b>&c", "quote\"back\\slash", "tab\tnew\nline\x01",
	"naïve 東京", "line\u2028sep", "bad\xffutf8", "0195a0c0-0000-7000-8000-0000000000a1"}

// plain are the strings of strs JSON writes without escapes.
var plain = []string{"", "alice", "GET /v1/sessions/:id", "naïve 東京", "0195a0c0-0000-7000-8000-0000000000a1"}

func randomRecord(rng *rand.Rand) Record {
	from := strs
	if rng.IntN(2) == 0 {
		from = plain
	}
	pick := func() string { return from[rng.IntN(len(from))] }
	zones := []*time.Location{time.UTC, time.FixedZone("", 9*3600), time.FixedZone("", -(3*3600 + 30*60))}
	r := Record{
		Version: rng.IntN(3) - 1, Seq: rng.Uint64() >> rng.IntN(64),
		Time:   time.Unix(rng.Int64N(1<<34)-1<<32, rng.Int64N(1e9)).In(zones[rng.IntN(len(zones))]),
		UserID: pick(), AccessKey: pick(), ActingAs: pick(), Action: pick(), EntityType: pick(), EntityID: pick(),
		ClientIP: pick(), Outcome: Outcome(pick()), Status: rng.IntN(2000) - 1000, Duration: time.Duration(rng.Int64() >> rng.IntN(64)),
		RequestID: pick(),
	}
	if rng.IntN(2) == 0 {
		r.Duration = -r.Duration
	}
	for i := range r.Hash {
		r.Hash[i], r.PrevHash[i] = byte(rng.Uint32()), byte(rng.Uint32())
	}
	return r
}

// TestAppendJSONIsEncodingJSON: the codec writes json.Marshal's bytes and
// reads them back as json.Unmarshal does.
func TestAppendJSONIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fast := 0
	for range 5000 {
		r := randomRecord(rng)
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got := AppendJSON([]byte("prefix"), &r)
		if string(got[6:]) != string(want) {
			t.Fatalf("AppendJSON:\n got %s\nwant %s", got[6:], want)
		}
		var back Record
		end, ok := ScanJSON(want, &back, "", nil)
		if !ok {
			continue // escapes: encoding/json's job
		}
		fast++
		var ref Record
		if err := json.Unmarshal(want, &ref); err != nil {
			t.Fatal(err)
		}
		if end != len(want) || !equal(back, ref) {
			t.Fatalf("ScanJSON(%s) = %+v (end %d), json.Unmarshal = %+v", want, back, end, ref)
		}
	}
	if fast < 1000 {
		t.Fatalf("only %d of 5000 records took the fast path", fast)
	}
}

// TestAppendUnsealedJSON: an unsealed record's JSON leaves out the zero
// chain fields, and both decoders give the record back; a chain field
// that is set is written as AppendJSON writes it.
func TestAppendUnsealedJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		r := randomRecord(rng)
		if i%4 != 0 { // mostly records before Seal: every chain field zero
			r.Version, r.Seq, r.PrevHash, r.Hash = 0, 0, Hash{}, Hash{}
		}
		got, full := AppendUnsealedJSON(nil, &r), AppendJSON(nil, &r)
		var want, ref Record
		if err := json.Unmarshal(full, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &ref); err != nil {
			t.Fatalf("json.Unmarshal(%s): %v", got, err)
		}
		if !equal(ref, want) {
			t.Fatalf("AppendUnsealedJSON %s decodes to %+v, AppendJSON's bytes to %+v", got, ref, want)
		}
		var back Record
		if end, ok := ScanJSON(got, &back, "", nil); ok && (end != len(got) || !equal(back, want)) {
			t.Fatalf("ScanJSON(%s) = %+v", got, back)
		}
		if r.Version != 0 && r.Seq != 0 && r.PrevHash != (Hash{}) && r.Hash != (Hash{}) && string(got) != string(full) {
			t.Fatalf("a sealed record: AppendUnsealedJSON %s, AppendJSON %s", got, full)
		}
		if r.Seq == 0 && r.PrevHash == (Hash{}) && r.Hash == (Hash{}) && len(got) >= len(full)-150 {
			t.Fatalf("an unsealed record is %d bytes, AppendJSON's %d: the zero chain fields were written", len(got), len(full))
		}
	}
}

func equal(a, b Record) bool {
	return a.Time.Equal(b.Time) && a.Time.Location().String() == b.Time.Location().String() &&
		a.Time.Format(time.RFC3339Nano) == b.Time.Format(time.RFC3339Nano) && func() bool { a.Time, b.Time = time.Time{}, time.Time{}; return a == b }()
}

// TestScanJSONShapes: spacing, key order, unknown keys, the extra field.
func TestScanJSONShapes(t *testing.T) {
	var r Record
	var extra uint64
	for _, c := range []struct {
		in     string
		ok     bool
		action string
		extra  uint64
	}{
		{`{}`, true, "", 0},
		{" \n{ \"action\" : \"x\" ,\t\"seq\":7 }  trailing", true, "x", 0},
		{`{"source_position":9,"action":"y"}`, true, "y", 9},
		{`{"Action":"x"}`, false, "", 0},                  // case-insensitive match: encoding/json's
		{`{"action":"a\"b"}`, false, "", 0},               // escape
		{`{"action":null}`, false, "", 0},                 // null
		{`{"seq":1.0}`, false, "", 0},                     // float
		{`{"seq":01}`, false, "", 0},                      // leading zero
		{`{"seq":-1}`, false, "", 0},                      // negative unsigned
		{`{"status":99999999999999999999}`, false, "", 0}, // overflow
		{`{"other":1}`, false, "", 0},                     // unknown key
		{`{"action":"x"`, false, "", 0},                   // truncated
		{`{"time":"yesterday"}`, false, "", 0},            // bad time
		{`{"hash":"00"}`, false, "", 0},                   // bad hash
		{`[1]`, false, "", 0},
	} {
		extra = 0
		_, ok := ScanJSON([]byte(c.in), &r, "source_position", &extra)
		if ok != c.ok || (ok && (r.Action != c.action || extra != c.extra)) {
			t.Errorf("ScanJSON(%s) = %+v, extra %d, ok %v", c.in, r, extra, ok)
		}
	}
}

// FuzzScanJSON: whatever the fast path accepts, encoding/json accepts and
// decodes alike.
func FuzzScanJSON(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		r := randomRecord(rng)
		f.Add(AppendJSON(nil, &r))
	}
	f.Add([]byte(`{"seq":1,"seq":2,"action":"a","action":"b"}`))
	f.Add([]byte(` {"time":"2026-11-21T10:00:00.5+09:00"} `))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Record
		end, ok := ScanJSON(data, &r, "", nil)
		if !ok {
			return
		}
		var ref Record
		if err := json.Unmarshal(data[:end], &ref); err != nil {
			t.Fatalf("ScanJSON accepted %q, json.Unmarshal: %v", data[:end], err)
		}
		if !equal(r, ref) {
			t.Fatalf("ScanJSON(%q) = %+v, json.Unmarshal = %+v", data[:end], r, ref)
		}
		if strings.TrimSpace(string(data[:end])) == "" {
			t.Fatal("empty object accepted")
		}
	})
}

// ScanRecords shares the strings that repeat across a batch's records;
// every record still reads back exactly, past the interner's bounds too
// (more distinct values than it keeps, values longer than it shares).
func TestScanRecordsSharesRepeatedStrings(t *testing.T) {
	var in []Record
	for i := range 2*maxInterned + 10 {
		r := sample(i)
		r.UserID = fmt.Sprintf("user-%d", i%3)
		r.Action = fmt.Sprintf("GET /v1/things/%d", i) // distinct: past maxInterned
		r.ClientIP = strings.Repeat("a", maxInternedLen+i%2)
		in = append(in, r)
	}
	payloads := PackRecords(len(in), 1<<30, func(b []byte, i int) []byte { return AppendUnsealedJSON(b, &in[i]) })
	if len(payloads) != 1 {
		t.Fatalf("%d payloads, want 1", len(payloads))
	}
	var got []Record
	if !ScanRecords(payloads[0], "", func(_ []byte, r Record, _ uint64) { got = append(got, r) }) {
		t.Fatal("ScanRecords refused its own batch")
	}
	if len(got) != len(in) {
		t.Fatalf("%d records read back, want %d", len(got), len(in))
	}
	for i := range in {
		want := in[i].normalize()
		if got[i].UserID != want.UserID || got[i].Action != want.Action || got[i].ClientIP != want.ClientIP || got[i].RequestID != want.RequestID || !got[i].Time.Equal(want.Time) {
			t.Fatalf("record %d read back as %+v, want %+v", i, got[i], want)
		}
	}
	if unsafe.StringData(got[0].UserID) != unsafe.StringData(got[3].UserID) {
		t.Error("the same user id in two records of a batch is two strings: not shared")
	}
}

// RecordsHint counts the records of the payloads PackRecords lays out.
func TestRecordsHint(t *testing.T) {
	for _, n := range []int{0, 1, 2, 37} {
		var in []Record
		for i := range n {
			in = append(in, sample(i))
		}
		for _, p := range PackRecords(n, 1<<20, func(b []byte, i int) []byte { return AppendUnsealedJSON(b, &in[i]) }) {
			if got := RecordsHint(p); got != n {
				t.Errorf("%d records: hint %d", n, got)
			}
		}
	}
	if got := RecordsHint([]byte(`{"records":[]}`)); got != 0 {
		t.Errorf("no records: hint %d", got)
	}
}
