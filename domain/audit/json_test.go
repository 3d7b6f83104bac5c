package audit

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
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

// canonical is data with its strings spelled as AppendJSON spells them:
// encoding/json writes the U+FFFD that replaces invalid UTF-8 as the
// escape \ufffd, AppendJSON as the character itself.
func canonical(t *testing.T, data []byte) string {
	t.Helper()
	v := jsontext.Value(bytes.Clone(data))
	if err := v.Format(jsontext.AllowInvalidUTF8(true), jsontext.EscapeForHTML(true), jsontext.EscapeForJS(true)); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return string(v)
}

// TestAppendJSONIsEncodingJSON: the codec writes json.Marshal's bytes,
// which read back as the record.
func TestAppendJSONIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		r := randomRecord(rng)
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got := AppendJSON([]byte("prefix"), &r)
		if string(got[:6]) != "prefix" || string(got[6:]) != canonical(t, want) {
			t.Fatalf("AppendJSON:\n got %s\nwant %s", got, want)
		}
		var back, ref Record
		if err := json.Unmarshal(got[6:], &back); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want, &ref); err != nil {
			t.Fatal(err)
		}
		if !equal(back, ref) {
			t.Fatalf("%s reads back as %+v, want %+v", got[6:], back, ref)
		}
	}
}

// TestAppendJSONGolden: records write the bytes the hand-written codec
// this one replaced wrote (testdata/records_golden.tsv: AppendJSON's,
// AppendUnsealedJSON's, and AppendUnsealedJSON's with the chain fields
// zero), U+FFFD's spelling aside (see canonical).
func TestAppendJSONGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/records_golden.tsv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 300 {
		t.Fatalf("%d golden lines, want 300", len(lines))
	}
	rng := rand.New(rand.NewPCG(20261127, 14))
	for i, line := range lines {
		want := strings.Split(line, "\t")
		if len(want) != 3 {
			t.Fatalf("line %d: %d columns, want 3", i+1, len(want))
		}
		r := randomRecord(rng)
		got := []string{string(AppendJSON(nil, &r)), string(AppendUnsealedJSON(nil, &r))}
		r.Version, r.Seq, r.PrevHash, r.Hash = 0, 0, Hash{}, Hash{}
		got = append(got, string(AppendUnsealedJSON(nil, &r)))
		for k := range want {
			if got[k] != canonical(t, []byte(want[k])) {
				t.Errorf("line %d, column %d:\n got %s\nwant %s", i+1, k+1, got[k], want[k])
			}
		}
	}
}

// TestAppendUnsealedJSON: an unsealed record's JSON leaves out the zero
// chain fields and decodes to the record; a chain field that is set is
// written as AppendJSON writes it.
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

// TestAppendJSONOutOfRangeTime: a time json.Marshal refuses (Seal never
// makes one) is written as AppendFormat writes it, not refused.
func TestAppendJSONOutOfRangeTime(t *testing.T) {
	r := Record{Time: time.Date(10000, 1, 2, 3, 4, 5, 0, time.UTC), Action: "a", Outcome: Success}
	got := string(AppendUnsealedJSON(nil, &r))
	const want = `{"time":"10000-01-02T03:04:05Z","action":"a","outcome":"success","status":0,"duration_ns":0}`
	if got != want {
		t.Fatalf("AppendUnsealedJSON: %s, want %s", got, want)
	}
}

// FuzzAppendJSON: records holding the fuzzer's strings write
// json.Marshal's bytes (see canonical), sealed or not, and read back.
func FuzzAppendJSON(f *testing.F) {
	for i, s := range strs {
		f.Add(s, strs[len(strs)-1-i], int64(i), uint64(i))
	}
	f.Fuzz(func(t *testing.T, s1, s2 string, n int64, seq uint64) {
		r := Record{Version: int(n % 3), Seq: seq, Time: time.Unix(n%(1<<34), n%1e9).UTC(), UserID: s1, AccessKey: s2, Action: s1,
			EntityID: s2, Outcome: Outcome(s1), Status: int(n % 1000), Duration: time.Duration(n), RequestID: s2}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendJSON(nil, &r); string(got) != canonical(t, want) {
			t.Fatalf("AppendJSON:\n got %s\nwant %s", got, want)
		}
		var back, ref Record
		if err := json.Unmarshal(AppendUnsealedJSON(nil, &r), &back); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want, &ref); err != nil {
			t.Fatal(err)
		}
		if !equal(back, ref) {
			t.Fatalf("AppendUnsealedJSON reads back as %+v, want %+v", back, ref)
		}
	})
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
