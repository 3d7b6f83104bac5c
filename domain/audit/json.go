package audit

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
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
func AppendJSON(b []byte, r *Record) []byte {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(r.Version), 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, r.Seq, 10)
	b = append(b, `,"time":"`...)
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
	b = append(b, `,"prev_hash":"`...)
	b = appendHex(b, r.PrevHash)
	b = append(b, `","hash":"`...)
	b = appendHex(b, r.Hash)
	return append(b, `"}`...)
}

func appendField(b []byte, key, s string, omitEmpty bool) []byte {
	if omitEmpty && s == "" {
		return b
	}
	return appendString(append(b, key...), s)
}

// appendString quotes s as encoding/json does; strings of plain ASCII
// (the usual case) are copied, anything else is left to encoding/json
// (its HTML-safe, U+2028 and invalid UTF-8 escapes).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
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
	*r = Record{}
	s := scanner{data: data}
	s.space()
	if !s.byte('{') {
		return 0, false
	}
	s.space()
	if s.byte('}') {
		return s.i, true
	}
	for {
		key, ok := s.str()
		if !ok {
			return 0, false
		}
		s.space()
		if !s.byte(':') {
			return 0, false
		}
		s.space()
		if !s.field(r, key, extraKey, extra) {
			return 0, false
		}
		s.space()
		if s.byte('}') {
			return s.i, true
		}
		if !s.byte(',') {
			return 0, false
		}
		s.space()
	}
}

// scanner reads the simple JSON of records; every method reports false
// for anything outside the fast path.
type scanner struct {
	data []byte
	i    int
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) byte(c byte) bool {
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string without escapes; its bytes alias data.
func (s *scanner) str() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	return s.strRest()
}

// strRest reads the rest of a string whose opening quote was read.
func (s *scanner) strRest() ([]byte, bool) {
	start, ascii := s.i, true
	for ; s.i < len(s.data); s.i++ {
		switch c := s.data[s.i]; {
		case c == '"':
			v := s.data[start:s.i]
			s.i++
			return v, ascii || utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false
}

// integer reads an optionally negative integer in JSON's syntax (no
// leading zeros, no fraction or exponent).
func (s *scanner) integer() ([]byte, bool) {
	start := s.i
	s.byte('-')
	digits := s.i
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
	}
	n := s.i - digits
	if n == 0 || (n > 1 && s.data[digits] == '0') {
		return nil, false
	}
	if s.i < len(s.data) {
		if c := s.data[s.i]; c == '.' || c == 'e' || c == 'E' {
			return nil, false
		}
	}
	return s.data[start:s.i], true
}

func (s *scanner) int(bits int) (int64, bool) {
	tok, ok := s.integer()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(string(tok), 10, bits)
	return v, err == nil
}

func (s *scanner) uint() (uint64, bool) {
	tok, ok := s.integer()
	if !ok || tok[0] == '-' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(tok), 10, 64)
	return v, err == nil
}

// field reads the value of key into r.
func (s *scanner) field(r *Record, key []byte, extraKey string, extra *uint64) bool {
	var ok bool
	switch string(key) {
	case "v":
		var v int64
		v, ok = s.int(strconv.IntSize)
		r.Version = int(v)
	case "seq":
		r.Seq, ok = s.uint()
	case "status":
		var v int64
		v, ok = s.int(strconv.IntSize)
		r.Status = int(v)
	case "duration_ns":
		var v int64
		v, ok = s.int(64)
		r.Duration = time.Duration(v)
	case "time":
		var v []byte
		if v, ok = s.str(); ok {
			ok = r.Time.UnmarshalText(v) == nil
		}
	case "prev_hash", "hash":
		h := &r.Hash
		if key[0] == 'p' {
			h = &r.PrevHash
		}
		var v []byte
		if v, ok = s.str(); ok {
			ok = h.UnmarshalText(v) == nil
		}
	default:
		dst := r.stringField(key)
		if dst == nil {
			if extraKey == "" || string(key) != extraKey {
				return false
			}
			*extra, ok = s.uint()
			return ok
		}
		var v []byte
		if v, ok = s.str(); ok {
			*dst = string(v)
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

// PackRecords lays out JSON-encoded records as the payloads of batch
// events ({"records":[...]}, what encoding/json writes for a struct whose
// one field, records, holds them), in order, each payload at most max
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

// ScanRecords reads a batch payload, {"records":[...]}, in the shape
// PackRecords lays out (any spacing), calling each for every record with
// its bytes (aliasing data) and extraKey's value (see ScanJSON). It
// reports false, having maybe called each for some records, when data is
// not of that shape: encoding/json then decides.
func ScanRecords(data []byte, extraKey string, each func(raw []byte, r Record, extra uint64)) bool {
	s := scanner{data: data}
	s.space()
	if !s.byte('{') || !s.byte('"') {
		return false
	}
	if key, ok := s.strRest(); !ok || string(key) != "records" {
		return false
	}
	s.space()
	if !s.byte(':') {
		return false
	}
	s.space()
	if !s.byte('[') {
		return false
	}
	s.space()
	if !s.byte(']') {
		var r Record
		var extra uint64
		for {
			extra = 0
			end, ok := ScanJSON(data[s.i:], &r, extraKey, &extra)
			if !ok {
				return false
			}
			each(data[s.i:s.i+end], r, extra)
			s.i += end
			s.space()
			if s.byte(']') {
				break
			}
			if !s.byte(',') {
				return false
			}
			s.space()
		}
	}
	s.space()
	if !s.byte('}') {
		return false
	}
	s.space()
	return s.i == len(data)
}
