package domain

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

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
	// TypeAuditPruned is what is left of an audit.sealed event whose
	// records were archived and pruned from the live store (the event
	// store's tombstone, eventstore.Pruner): never appended.
	TypeAuditPruned = "audit.pruned"
)

// Streams of the audit trail.
const (
	// AccessLogStream holds the access records written apart from any
	// command's events (reads, failed and denied requests).
	AccessLogStream = string(StreamAccessLog)
	// AuditStream is the hash chain: each event a run of consecutive
	// sealed records, the first event starting at seq 1.
	AuditStream = string(StreamAudit)
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

// UnmarshalJSONFrom decodes the record and keeps its bytes as stored
// (Raw), how an AuditSealed payload is read.
func (r *SealedRecord) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	type fields SealedRecord // without this method
	*r = SealedRecord{Raw: bytes.Clone(raw)}
	return jsonv2.Unmarshal(r.Raw, (*fields)(r), jsonOptions)
}

// UnmarshalJSON is UnmarshalJSONFrom for encoding/json.
func (r *SealedRecord) UnmarshalJSON(b []byte) error { return jsonv2.Unmarshal(b, r, jsonOptions) }

const sourcePositionKey = "source_position"

// AppendSealedJSON appends r's JSON encoding to b: the bytes
// json.Marshal(r) writes.
func AppendSealedJSON(b []byte, r *SealedRecord) []byte {
	b = audit.AppendJSON(b, &r.Record)
	b = append(b[:len(b)-1], `,"`+sourcePositionKey+`":`...)
	b = strconv.AppendUint(b, r.SourcePosition, 10)
	return append(b, '}')
}

// AuditPruned is the tombstone of the audit stream's events whose records
// were archived (cairn audit archive) and pruned: every one of them says
// where the live chain now starts, the head of the last archived record,
// which the first live record's prev_hash names.
type AuditPruned struct {
	// Through is the head of the last record archived and pruned.
	Through audit.Head `json:"through"`
	// At is when the prune ran.
	At time.Time `json:"at"`
}

func (AuditPruned) EventType() string { return TypeAuditPruned }

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
