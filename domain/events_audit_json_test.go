package domain

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain/audit"
)

// The audit trail's events are read by the event codec too: held here to
// encoding/json on plain structs without methods.

// v1SealedRecord is a sealed record as encoding/json reads it alone.
type v1SealedRecord struct {
	audit.Record
	SourcePosition uint64 `json:"source_position"`
}

// checkAuditDecode: DecodeEvent gives what encoding/json gives for both
// audit batch events, or fails where it fails; a sealed record keeps its
// stored bytes.
func checkAuditDecode(t *testing.T, data []byte) {
	t.Helper()
	var wantBatch struct {
		Records []audit.Record `json:"records"`
	}
	got, err := DecodeEvent(TypeAccessBatchLogged, SchemaVersion, data)
	wantErr := json.Unmarshal(data, &wantBatch)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("access.batch-logged %q: error %v, json.Unmarshal's %v", data, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got.(AccessBatchLogged).Records, wantBatch.Records) {
		t.Fatalf("access.batch-logged %q:\n got %+v\nwant %+v", data, got, wantBatch.Records)
	}
	var wantSealed struct {
		Records []v1SealedRecord `json:"records"`
	}
	got, err = DecodeEvent(TypeAuditSealed, SchemaVersion, data)
	wantErr = json.Unmarshal(data, &wantSealed)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("audit.sealed %q: error %v, json.Unmarshal's %v", data, err, wantErr)
	}
	if err != nil {
		return
	}
	records := got.(AuditSealed).Records
	if (records == nil) != (wantSealed.Records == nil) || len(records) != len(wantSealed.Records) {
		t.Fatalf("audit.sealed %q: %d records, want %d", data, len(records), len(wantSealed.Records))
	}
	for i, r := range records {
		if r.Record != wantSealed.Records[i].Record && !reflect.DeepEqual(r.Record, wantSealed.Records[i].Record) ||
			r.SourcePosition != wantSealed.Records[i].SourcePosition {
			t.Fatalf("audit.sealed %q: record %d is %+v, want %+v", data, i, r, wantSealed.Records[i])
		}
		var alone v1SealedRecord
		if err := json.Unmarshal(r.Raw, &alone); err != nil || !reflect.DeepEqual(alone, wantSealed.Records[i]) {
			t.Fatalf("audit.sealed %q: record %d's raw bytes %s read as %+v (%v)", data, i, r.Raw, alone, err)
		}
	}
}

// TestAuditEventsDecodeShapes: spacing, key order, cases, escapes, the
// extra source_position, repeats, null, numbers of other forms, bad
// times and hashes.
func TestAuditEventsDecodeShapes(t *testing.T) {
	for _, rec := range []string{
		`{}`, ` { "action" : "x" ,	"seq":7 } `, `{"source_position":9,"action":"y"}`, `{"Action":"x"}`, `{"action":"a\"b"}`,
		`{"action":null}`, `{"seq":1.0}`, `{"seq":01}`, `{"seq":-1}`, `{"status":99999999999999999999}`, `{"other":1}`,
		`{"time":"yesterday"}`, `{"time":"2026-11-21T10:00:00.5+09:00"}`, `{"hash":"00"}`, `[1]`, `{"seq":1,"seq":2,"action":"a","action":"b"}`,
		"{\"action\":\"\xff\"}", `{"prev_hash":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}`, `{"duration_ns":-5}`,
	} {
		checkAuditDecode(t, []byte(`{"records":[`+rec+`]}`))
		checkAuditDecode(t, []byte(`{"records":[`+rec+`, `+rec+`]}`))
	}
	for _, payload := range []string{`{"records":[]}`, `{"records":null}`, `{}`, `null`, `{"records":[]} x`, `{"records":[{},]}`, `[]`, ``} {
		checkAuditDecode(t, []byte(payload))
	}
}

// auditPayloads are batches as the access-log writer and the sequencer
// lay them out, of random records.
func auditPayloads(seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 9))
	strs := []string{"", "alice", "GET /v1/sessions/:id", "a<b>&c", "quote\"back\\slash", "naïve 東京", "bad\xffutf8"}
	pick := func() string { return strs[rng.IntN(len(strs))] }
	var out [][]byte
	for range 8 {
		recs := make([]SealedRecord, 1+rng.IntN(5))
		for i := range recs {
			recs[i] = SealedRecord{Record: audit.Record{Version: 1, Seq: rng.Uint64N(1 << 40), Time: time.Unix(rng.Int64N(1<<33), rng.Int64N(1e9)).UTC(),
				UserID: pick(), AccessKey: pick(), Action: pick(), EntityType: pick(), ClientIP: pick(), Outcome: audit.Outcome(pick()),
				Status: rng.IntN(600), Duration: time.Duration(rng.Int64N(1 << 40)), RequestID: pick()}, SourcePosition: rng.Uint64N(1 << 30)}
			recs[i].Hash[rng.IntN(32)] = byte(rng.Uint32())
		}
		out = append(out, audit.PackRecords(len(recs), 1<<20, func(b []byte, i int) []byte { return AppendSealedJSON(b, &recs[i]) })...)
		out = append(out, audit.PackRecords(len(recs), 1<<20, func(b []byte, i int) []byte { return audit.AppendUnsealedJSON(b, &recs[i].Record) })...)
	}
	return out
}

// TestAuditEventsDecodeRecords: batches as written read as encoding/json
// reads them.
func TestAuditEventsDecodeRecords(t *testing.T) {
	for seed := range uint64(50) {
		for _, p := range auditPayloads(seed) {
			checkAuditDecode(t, p)
		}
	}
}

// FuzzDecodeAuditBatch: any payload decodes as an access.batch-logged
// and an audit.sealed event as encoding/json decodes it.
func FuzzDecodeAuditBatch(f *testing.F) {
	for _, p := range auditPayloads(1) {
		f.Add(p)
	}
	for _, s := range []string{`{"records":[{"seq":1,"seq":2}]}`, ` {"records":[ {"time":"2026-11-21T10:00:00.5+09:00"} ]} `, `{"Records":[{"Action":"\u0041"}]}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkAuditDecode(t, data) })
}

// BenchmarkDecodeAuditBatch: records decoded per second from batches of
// 200, as the sequencer reads the access log and the audit read model
// reads its runs.
func BenchmarkDecodeAuditBatch(b *testing.B) {
	recs := make([]SealedRecord, 200)
	for i := range recs {
		recs[i] = SealedRecord{Record: audit.Record{Version: 1, Seq: uint64(i + 1), Time: time.Date(2026, 11, 21, 12, 0, 0, 123456789, time.UTC),
			UserID: "0195a0c0-0000-7000-8000-000000000001", AccessKey: "AKIAIOSFODNN7EXAMPLE", Action: "GET /v1/auth/whoami", EntityType: "auth",
			ClientIP: "127.0.0.1", Outcome: audit.Success, Status: 200, Duration: 123456, RequestID: "0195a0c0-0000-7000-8000-0000000000aa"},
			SourcePosition: 42}
		recs[i].Hash[0], recs[i].PrevHash[0] = byte(i), byte(i+1)
	}
	for _, c := range []struct {
		typ    string
		append func([]byte, int) []byte
	}{
		{TypeAccessBatchLogged, func(b []byte, i int) []byte { return audit.AppendUnsealedJSON(b, &recs[i].Record) }},
		{TypeAuditSealed, func(b []byte, i int) []byte { return AppendSealedJSON(b, &recs[i]) }},
	} {
		payload := audit.PackRecords(len(recs), 1<<20, c.append)[0]
		b.Run(c.typ, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(payload)))
			for b.Loop() {
				if _, err := DecodeEvent(c.typ, SchemaVersion, payload); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(len(recs))/b.Elapsed().Seconds(), "records/s")
		})
	}
}
