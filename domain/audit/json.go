package audit

import (
	"bytes"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Records are written with go-json-experiment/json (the encoding/json/v2
// proposal) with encoding/json's semantics, the bytes it wrote before
// (see jsonOptions); the events that carry them are read back by the
// domain's event codec, with the same options.

// jsonOptions are encoding/json's semantics (the bytes every stored record
// has), with v2's errors.
var jsonOptions = json.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv1.ReportErrorsWithLegacySemantics(false))

// anyTimeOptions are jsonOptions writing times as AppendFormat writes
// them, even outside years 0 to 9999 (which encoding/json refuses and Seal
// never produces), so that writing a record cannot fail. Only such a time
// takes them: a marshaler of one's own costs every value a lookup.
var anyTimeOptions = json.JoinOptions(jsonOptions, json.WithMarshalers(json.MarshalToFunc(func(enc *jsontext.Encoder, t time.Time) error {
	var buf [64]byte
	return enc.WriteValue(append(t.AppendFormat(append(buf[:0], '"'), time.RFC3339Nano), '"'))
})))

// AppendJSON appends r's JSON encoding to b: the bytes json.Marshal(r)
// writes (invalid UTF-8 aside: both write U+FFFD for it, encoding/json as
// the escape \ufffd, this as the character itself).
func AppendJSON(b []byte, r *Record) []byte { return appendJSON(b, r) }

// AppendUnsealedJSON appends the JSON of a record not yet in the chain:
// AppendJSON's bytes without the chain fields (v, seq, prev_hash, hash)
// that are zero, which is all of them before Seal (about 160 bytes of
// zeros a record). Decoding it gives r back: an absent field is a zero
// one.
func AppendUnsealedJSON(b []byte, r *Record) []byte { return appendJSON(b, (*unsealedRecord)(r)) }

// unsealedRecord is a Record whose chain fields are left out when zero; a
// field added to Record and not here fails to compile the conversion.
type unsealedRecord struct {
	Version    int           `json:"v,omitzero"`
	Seq        uint64        `json:"seq,omitzero"`
	Time       time.Time     `json:"time"`
	UserID     string        `json:"user_id,omitempty"`
	AccessKey  string        `json:"access_key,omitempty"`
	ActingAs   string        `json:"acting_as,omitempty"`
	Action     string        `json:"action"`
	EntityType string        `json:"entity_type,omitempty"`
	EntityID   string        `json:"entity_id,omitempty"`
	ClientIP   string        `json:"client_ip,omitempty"`
	Outcome    Outcome       `json:"outcome"`
	Status     int           `json:"status"`
	Duration   time.Duration `json:"duration_ns"`
	RequestID  string        `json:"request_id,omitempty"`
	PrevHash   Hash          `json:"prev_hash,omitzero"`
	Hash       Hash          `json:"hash,omitzero"`
}

// appendJSON appends v's encoding (a record's: with anyTimeOptions every
// field has one for every value, so it cannot fail).
func appendJSON(b []byte, v any) []byte {
	buf := bytes.NewBuffer(b)
	if err := json.MarshalWrite(buf, v, jsonOptions); err == nil {
		return buf.Bytes()
	}
	buf = bytes.NewBuffer(b) // what the failed attempt wrote is dropped
	if err := json.MarshalWrite(buf, v, anyTimeOptions); err != nil {
		panic(fmt.Sprintf("audit: a record does not encode: %v", err))
	}
	return buf.Bytes()
}

// PackRecords lays out n records as the payloads of batch events
// ({"records":[...]}, what encoding/json writes for a struct whose one
// field, records, holds them), in order, each payload at most max bytes
// unless one record alone is larger. appendRecord appends the JSON of
// record i to b (AppendJSON, AppendUnsealedJSON...): records are encoded
// in place, in the payload they land in. A writer that packs again and
// again uses a Packer instead, which reuses its memory.
func PackRecords(n, max int, appendRecord func(b []byte, i int) []byte) [][]byte {
	var p Packer
	return p.Pack(n, max, appendRecord)
}

// Packer packs records as PackRecords does, into memory it keeps from one
// Pack to the next: the payloads of a Pack (and the slice holding them)
// are valid until the next Pack. The access-log writer and the audit
// sequencer pack every batch this way and hand the payloads to the event
// store, which keeps nothing of them once the append returns. A Packer is
// not safe for concurrent use; its zero value is ready.
type Packer struct {
	buf     []byte   // the payloads, one after the other
	payload [][]byte // what Pack returns
	moved   []byte   // a record that opens the next payload, on its way
}

// Pack lays out n records (see PackRecords).
func (p *Packer) Pack(n, max int, appendRecord func(b []byte, i int) []byte) [][]byte {
	const open, close = `{"records":[`, `]}`
	b, out := p.buf[:0], p.payload[:0]
	start := -1 // where the open payload begins, -1 while none is
	for i := range n {
		if start < 0 {
			start = len(b)
			b = appendRecord(append(b, open...), i)
			continue
		}
		mark := len(b)
		b = appendRecord(append(b, ','), i)
		if len(b)-start+len(close) > max {
			// The record does not fit: it opens the next payload.
			p.moved = append(p.moved[:0], b[mark+1:]...)
			b = append(b[:mark], close...)
			out = append(out, b[start:len(b):len(b)])
			start = len(b)
			b = append(append(b, open...), p.moved...)
		}
	}
	if start >= 0 {
		b = append(b, close...)
		out = append(out, b[start:len(b):len(b)])
	}
	p.buf, p.payload = b, out
	return out
}

// RecordsHint estimates how many records a batch payload holds, to size
// the slice they are decoded into: records are laid out as {...},{...},
// so it counts the "},{" between them (a string holding those three bytes
// counts one more: it is only a hint).
func RecordsHint(data []byte) int {
	if len(data) < len(`{"records":[{}]}`) {
		return 0
	}
	return bytes.Count(data, []byte("},{")) + 1
}
