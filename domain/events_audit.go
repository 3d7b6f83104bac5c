package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cairnhq/cairn/domain/audit"
)

// Wire names of the audit trail's events.
const (
	// TypeAccessLogged is one mutating request's access record, not yet in
	// the chain, written in the same append as the request's events (in
	// that aggregate's stream).
	TypeAccessLogged = "access.logged"
	// TypeAccessBatchLogged is a batch of access records of reads, failed
	// and denied requests, not yet in the chain, group-committed to the
	// access-log stream by the API.
	TypeAccessBatchLogged = "access.batch-logged"
	// TypeAuditSealed is a run of access records sealed into the hash
	// chain by the audit sequencer, in the audit stream.
	TypeAuditSealed = "audit.sealed"
)

// Streams of the audit trail.
const (
	// AccessLogStream holds the access records written apart from any
	// command's events (reads, failed and denied requests).
	AccessLogStream = "access-log"
	// AuditStream is the hash chain: each event a run of consecutive
	// sealed records, the first event starting at seq 1.
	AuditStream = "audit"
)

// AccessLogged is one request's access record before it is chained (Seq,
// PrevHash and Hash are zero). It is an annotation: aggregates never see
// it (the command repository leaves it out when it folds a stream).
type AccessLogged struct {
	audit.Record
}

// AccessBatchLogged is a batch of access records before they are chained,
// in the order the API queued them. One event carries a group commit's
// records, so the trail's cost per request is a few hundred bytes, not an
// event.
type AccessBatchLogged struct {
	Records []audit.Record `json:"records"`
}

// SealedRecord is an access record sealed into the chain, with the
// position of the event that logged it (not covered by the hash: it lets
// an auditor find the source, and the sequencer resume).
type SealedRecord struct {
	audit.Record
	SourcePosition uint64 `json:"source_position"`
	// Raw is the record's JSON as stored, byte for byte, when it was
	// decoded from an event (what an export writes, so it verifies
	// offline); nil otherwise.
	Raw json.RawMessage `json:"-"`
}

// AuditSealed is a run of records the sequencer sealed in one append:
// consecutive seqs, each chained to the one before. The sources of one
// event are sealed whole: the last record's SourcePosition is the log
// position up to which every access record is in the chain.
type AuditSealed struct {
	Records []SealedRecord `json:"records"`
}

// UnmarshalJSON decodes the records and keeps each one's stored bytes.
func (e *AuditSealed) UnmarshalJSON(b []byte) error {
	e.Records = nil
	if scanRecords(b, sourcePositionKey, func(raw []byte, r audit.Record, source uint64) {
		e.Records = append(e.Records, SealedRecord{Record: r, SourcePosition: source, Raw: raw})
	}) {
		return nil
	}
	var raw struct {
		Records []json.RawMessage `json:"records"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	e.Records = make([]SealedRecord, len(raw.Records))
	for i, r := range raw.Records {
		if err := json.Unmarshal(r, &e.Records[i]); err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		e.Records[i].Raw = r
	}
	return nil
}

// UnmarshalJSON decodes the records (audit.ScanJSON's fast path, or
// encoding/json for what it does not take).
func (e *AccessBatchLogged) UnmarshalJSON(b []byte) error {
	e.Records = nil
	if scanRecords(b, "", func(_ []byte, r audit.Record, _ uint64) { e.Records = append(e.Records, r) }) {
		return nil
	}
	type plain AccessBatchLogged
	return json.Unmarshal(b, (*plain)(e))
}

func (e *AuditSealed) decodeSelf(b []byte) error       { return e.UnmarshalJSON(b) }
func (e *AccessBatchLogged) decodeSelf(b []byte) error { return e.UnmarshalJSON(b) }

const sourcePositionKey = "source_position"

// AppendSealedJSON appends r's JSON encoding to b: the bytes
// json.Marshal(r) writes.
func AppendSealedJSON(b []byte, r *SealedRecord) []byte {
	b = audit.AppendJSON(b, &r.Record)
	b = append(b[:len(b)-1], `,"`+sourcePositionKey+`":`...)
	b = strconv.AppendUint(b, r.SourcePosition, 10)
	return append(b, '}')
}

// scanRecords reads a batch payload, {"records":[...]}, in the shape
// PackRecords lays out, calling each for every record (its bytes alias
// data); it reports false, having maybe called each for some records,
// when data is not of that shape (encoding/json then decides).
func scanRecords(data []byte, extraKey string, each func(raw []byte, r audit.Record, extra uint64)) bool {
	i := skipSpace(data, 0)
	const open = `{"records":`
	if !bytes.HasPrefix(data[i:], []byte(open)) {
		return false
	}
	i = skipSpace(data, i+len(open))
	if i >= len(data) || data[i] != '[' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		i++
	} else {
		var r audit.Record
		var extra uint64
		for {
			extra = 0
			end, ok := audit.ScanJSON(data[i:], &r, extraKey, &extra)
			if !ok {
				return false
			}
			each(data[i:i+end], r, extra)
			i = skipSpace(data, i+end)
			if i >= len(data) {
				return false
			}
			if data[i] == ']' {
				i++
				break
			}
			if data[i] != ',' {
				return false
			}
			i = skipSpace(data, i+1)
		}
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != '}' {
		return false
	}
	return skipSpace(data, i+1) == len(data)
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

func (AccessLogged) EventType() string      { return TypeAccessLogged }
func (AccessBatchLogged) EventType() string { return TypeAccessBatchLogged }
func (AuditSealed) EventType() string       { return TypeAuditSealed }

// IsAnnotation reports whether events of this type annotate a stream
// without being part of its aggregate (access records).
func IsAnnotation(eventType string) bool { return eventType == TypeAccessLogged }

// AccessRecords are the unchained access records an event carries (one
// for access.logged, a batch for access.batch-logged), ok false for any
// other event.
func AccessRecords(ev Event) (records []audit.Record, ok bool) {
	switch e := ev.(type) {
	case AccessLogged:
		return []audit.Record{e.Record}, true
	case AccessBatchLogged:
		return e.Records, true
	}
	return nil, false
}

// AuditPayloadBytes is the size the audit trail's batch events aim at
// (well under the event stores' default limit of 1 MiB per event): a
// batch larger than this is split into several events of one append.
const AuditPayloadBytes = 256 << 10

// PackRecords lays out JSON-encoded records as the payloads of batch
// events ({"records":[...]}, what encoding/json writes for
// AccessBatchLogged and AuditSealed), in order, each payload at most max
// bytes unless one record alone is larger.
func PackRecords(records [][]byte, max int) [][]byte {
	const open, close = `{"records":[`, `]}`
	var out [][]byte
	var cur []byte
	for _, r := range records {
		if cur != nil && len(cur)+1+len(r)+len(close) > max {
			out = append(out, append(cur, close...))
			cur = nil
		}
		if cur == nil {
			cur = append(make([]byte, 0, min(max, 64<<10)), open...)
		} else {
			cur = append(cur, ',')
		}
		cur = append(cur, r...)
	}
	if cur != nil {
		out = append(out, append(cur, close...))
	}
	return out
}
