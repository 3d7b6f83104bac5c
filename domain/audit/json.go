package audit

import (
	"bytes"
	"strconv"
	"time"

	"github.com/cairnhq/cairn/domain/internal/plainjson"
)

// The audit trail encodes and decodes every access record several times
// on its way (the API's writer, the sequencer, the read model), so records
// have a hand-written JSON codec. It writes exactly the bytes
// encoding/json writes for a Record, and reads what encoding/json reads:
// ScanJSON takes a fast path for the shape AppendJSON writes (any key
// order and spacing) and reports anything else (escapes, unknown or
// differently cased keys, null, floats...) so the caller decodes it with
// encoding/json instead. A fuzz test holds both to encoding/json.

// AppendJSON appends r's JSON encoding to b: the bytes json.Marshal(r)
// writes. A time outside years 0 to 9999 (which json.Marshal refuses and
// Seal never produces) is written as AppendFormat writes it.
func AppendJSON(b []byte, r *Record) []byte { return appendRecord(b, r, false) }

// AppendUnsealedJSON appends the JSON of a record not yet in the chain:
// AppendJSON's bytes without the chain fields (v, seq, prev_hash, hash)
// that are zero, which is all of them before Seal (about 160 bytes of
// zeros a record). Decoding it (ScanJSON, or encoding/json) gives r back:
// an absent field is a zero one.
func AppendUnsealedJSON(b []byte, r *Record) []byte { return appendRecord(b, r, true) }

// appendRecord writes r's fields in json.Marshal's order; with omitZero,
// the chain fields are left out when zero.
func appendRecord(b []byte, r *Record, omitZero bool) []byte {
	b = append(b, '{')
	if !omitZero || r.Version != 0 {
		b = append(b, `"v":`...)
		b = strconv.AppendInt(b, int64(r.Version), 10)
		b = append(b, ',')
	}
	if !omitZero || r.Seq != 0 {
		b = append(b, `"seq":`...)
		b = strconv.AppendUint(b, r.Seq, 10)
		b = append(b, ',')
	}
	b = append(b, `"time":"`...)
	b = r.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = appendField(b, `,"user_id":`, r.UserID, true)
	b = appendField(b, `,"access_key":`, r.AccessKey, true)
	b = appendField(b, `,"acting_as":`, r.ActingAs, true)
	b = appendField(b, `,"action":`, r.Action, false)
	b = appendField(b, `,"entity_type":`, r.EntityType, true)
	b = appendField(b, `,"entity_id":`, r.EntityID, true)
	b = appendField(b, `,"client_ip":`, r.ClientIP, true)
	b = appendField(b, `,"outcome":`, string(r.Outcome), false)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, `,"duration_ns":`...)
	b = strconv.AppendInt(b, int64(r.Duration), 10)
	b = appendField(b, `,"request_id":`, r.RequestID, true)
	if !omitZero || r.PrevHash != (Hash{}) {
		b = append(b, `,"prev_hash":"`...)
		b = appendHex(b, r.PrevHash)
		b = append(b, '"')
	}
	if !omitZero || r.Hash != (Hash{}) {
		b = append(b, `,"hash":"`...)
		b = appendHex(b, r.Hash)
		b = append(b, '"')
	}
	return append(b, '}')
}

func appendField(b []byte, key, s string, omitEmpty bool) []byte {
	if omitEmpty && s == "" {
		return b
	}
	return plainjson.AppendString(append(b, key...), s)
}

func appendHex(b []byte, h Hash) []byte {
	const digits = "0123456789abcdef"
	for _, c := range h {
		b = append(b, digits[c>>4], digits[c&0x0f])
	}
	return b
}

// ScanJSON decodes the JSON object at the start of data (after optional
// spaces) into r, which it first resets, and returns the offset just past
// the object. extraKey, when not empty, names one more unsigned integer
// field the object may hold (a record embedded in a larger event payload),
// decoded into extra. ok is false when the object is not of the simple
// shape AppendJSON writes: then r, extra and end are meaningless, and the
// object must be decoded with encoding/json, which may accept it (for
// instance with escaped strings) or report why not.
func ScanJSON(data []byte, r *Record, extraKey string, extra *uint64) (end int, ok bool) {
	return scanJSON(data, r, extraKey, extra, nil)
}

// scanJSON is ScanJSON taking its strings from in (nil: none shared).
func scanJSON(data []byte, r *Record, extraKey string, extra *uint64, in *interner) (end int, ok bool) {
	*r = Record{}
	s := plainjson.Scanner{Data: data}
	s.Space()
	if !s.Object(func(key []byte) bool { return field(&s, r, key, extraKey, extra, in) }) {
		return 0, false
	}
	return s.I, true
}

// interner shares the strings that repeat from record to record of a
// batch (actions, user ids, access keys, client addresses, outcomes): the
// records of one batch are mostly the same few users calling the same few
// routes, so a batch costs one string per distinct value instead of one
// per record and field. Request ids, unique, are not shared.
type interner struct {
	m map[string]string
}

// Bounds of an interner: the values kept, and the longest one.
const (
	maxInterned    = 256
	maxInternedLen = 128
)

// string returns v as a string, the same one for the same bytes.
func (in *interner) string(v []byte) string {
	if in == nil || len(v) > maxInternedLen {
		return string(v)
	}
	if s, ok := in.m[string(v)]; ok {
		return s
	}
	s := string(v)
	if in.m == nil {
		in.m = make(map[string]string, 16)
	}
	if len(in.m) < maxInterned {
		in.m[s] = s
	}
	return s
}

// field reads the value of key into r.
func field(s *plainjson.Scanner, r *Record, key []byte, extraKey string, extra *uint64, in *interner) bool {
	var ok bool
	switch string(key) {
	case "v":
		var v int64
		v, ok = s.Int(strconv.IntSize)
		r.Version = int(v)
	case "seq":
		r.Seq, ok = s.Uint()
	case "status":
		var v int64
		v, ok = s.Int(strconv.IntSize)
		r.Status = int(v)
	case "duration_ns":
		var v int64
		v, ok = s.Int(64)
		r.Duration = time.Duration(v)
	case "time":
		var v []byte
		if v, ok = s.Str(); ok {
			ok = r.Time.UnmarshalText(v) == nil
		}
	case "prev_hash", "hash":
		h := &r.Hash
		if key[0] == 'p' {
			h = &r.PrevHash
		}
		var v []byte
		if v, ok = s.Str(); ok {
			ok = h.UnmarshalText(v) == nil
		}
	default:
		dst := r.stringField(key)
		if dst == nil {
			if extraKey == "" || string(key) != extraKey {
				return false
			}
			*extra, ok = s.Uint()
			return ok
		}
		var v []byte
		if v, ok = s.Str(); ok {
			if dst == &r.RequestID {
				*dst = string(v)
			} else {
				*dst = in.string(v)
			}
		}
	}
	return ok
}

// stringField is the string field a key names, nil for any other key.
func (r *Record) stringField(key []byte) *string {
	switch string(key) {
	case "user_id":
		return &r.UserID
	case "access_key":
		return &r.AccessKey
	case "acting_as":
		return &r.ActingAs
	case "action":
		return &r.Action
	case "entity_type":
		return &r.EntityType
	case "entity_id":
		return &r.EntityID
	case "client_ip":
		return &r.ClientIP
	case "outcome":
		return (*string)(&r.Outcome)
	case "request_id":
		return &r.RequestID
	}
	return nil
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

// ScanRecords reads a batch payload, {"records":[...]}, in the shape
// PackRecords lays out (any spacing), calling each for every record with
// its bytes (aliasing data) and extraKey's value (see ScanJSON). It
// reports false, having maybe called each for some records, when data is
// not of that shape: encoding/json then decides.
func ScanRecords(data []byte, extraKey string, each func(raw []byte, r Record, extra uint64)) bool {
	s := plainjson.Scanner{Data: data}
	s.Space()
	if !s.Byte('{') || !s.Byte('"') {
		return false
	}
	if key, ok := s.StrRest(); !ok || string(key) != "records" {
		return false
	}
	s.Space()
	if !s.Byte(':') {
		return false
	}
	s.Space()
	if !s.Byte('[') {
		return false
	}
	s.Space()
	if !s.Byte(']') {
		var r Record
		var extra uint64
		var in interner
		for {
			extra = 0
			end, ok := scanJSON(data[s.I:], &r, extraKey, &extra, &in)
			if !ok {
				return false
			}
			each(data[s.I:s.I+end], r, extra)
			s.I += end
			s.Space()
			if s.Byte(']') {
				break
			}
			if !s.Byte(',') {
				return false
			}
			s.Space()
		}
	}
	s.Space()
	if !s.Byte('}') {
		return false
	}
	s.Space()
	return s.I == len(data)
}
