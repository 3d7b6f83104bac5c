// Package plainjson reads and writes the plain JSON encoding/json writes
// (no escapes in strings, integers without fraction or exponent, any key
// order and spacing), for the domain's hand-written codecs: the audit
// trail's records and the scheduler's hot events. A Scanner reports
// false for anything outside that subset, and its caller then leaves the
// whole input to encoding/json, whose result and errors stand.
package plainjson

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// Scanner reads plain JSON from Data, at offset I; every method reports
// false for anything outside the fast path.
type Scanner struct {
	Data []byte
	I    int
}

// Space skips JSON white space.
func (s *Scanner) Space() {
	for s.I < len(s.Data) {
		switch s.Data[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Byte reads c if it comes next.
func (s *Scanner) Byte(c byte) bool {
	if s.I < len(s.Data) && s.Data[s.I] == c {
		s.I++
		return true
	}
	return false
}

// End reports whether only white space is left.
func (s *Scanner) End() bool {
	s.Space()
	return s.I == len(s.Data)
}

// Null reads null if it comes next.
func (s *Scanner) Null() bool {
	if len(s.Data)-s.I >= 4 && string(s.Data[s.I:s.I+4]) == "null" {
		s.I += 4
		return true
	}
	return false
}

// Str reads a string without escapes, of valid UTF-8; its bytes alias
// Data.
func (s *Scanner) Str() ([]byte, bool) {
	if !s.Byte('"') {
		return nil, false
	}
	return s.StrRest()
}

// StrRest reads the rest of a string whose opening quote was read.
func (s *Scanner) StrRest() ([]byte, bool) {
	data, start := s.Data, s.I
	i := start
	for ; i+8 <= len(data); i += 8 { // 8 bytes at a time while all plain
		if m := notPlain8(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			i += bits.TrailingZeros64(m) / 8
			break
		}
	}
	for i < len(data) && asciiPlain[data[i]] {
		i++
	}
	if i < len(data) && data[i] == '"' {
		s.I = i + 1
		return data[start:i], true
	}
	for ; i < len(data); i++ { // non-ASCII: valid UTF-8 is taken as is
		if c := data[i]; c == '"' {
			s.I = i + 1
			return data[start:i], utf8.Valid(data[start:i])
		} else if c == '\\' || c < 0x20 {
			return nil, false
		}
	}
	return nil, false
}

// notPlain8 has the high bit set in the first byte of x (in memory order)
// that is not plain ASCII in a string (see asciiPlain), and maybe in
// bytes after it; it is zero when all eight are plain.
func notPlain8(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	// A byte below 0x20, or equal to a quote or backslash, borrows in
	// its subtraction and sets its high bit; non-ASCII bytes have theirs.
	return ((x - ones*0x20) | (quote - ones) | (backslash - ones) | x) & highs
}

// asciiPlain are the bytes a string holds as themselves in ASCII: not a
// quote, a backslash or a control character.
var asciiPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// String reads a string as Str does, copied.
func (s *Scanner) String() (string, bool) {
	v, ok := s.Str()
	return string(v), ok
}

// Integer reads an optionally negative integer in JSON's syntax (no
// leading zeros, no fraction or exponent).
func (s *Scanner) Integer() ([]byte, bool) {
	start := s.I
	s.Byte('-')
	digits := s.I
	for s.I < len(s.Data) && s.Data[s.I] >= '0' && s.Data[s.I] <= '9' {
		s.I++
	}
	n := s.I - digits
	if n == 0 || (n > 1 && s.Data[digits] == '0') {
		return nil, false
	}
	if s.I < len(s.Data) {
		if c := s.Data[s.I]; c == '.' || c == 'e' || c == 'E' {
			return nil, false
		}
	}
	return s.Data[start:s.I], true
}

// Int reads an integer that fits in a signed integer of bits bits.
func (s *Scanner) Int(bits int) (int64, bool) {
	tok, ok := s.Integer()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(string(tok), 10, bits)
	return v, err == nil
}

// Uint reads a non-negative integer that fits in 64 bits.
func (s *Scanner) Uint() (uint64, bool) {
	tok, ok := s.Integer()
	if !ok || tok[0] == '-' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(tok), 10, 64)
	return v, err == nil
}

// Object reads an object, calling member for each key (aliasing Data)
// with the scanner at the member's value, which member reads. It reports
// false when member does or the object is not well formed. Duplicate
// keys are member's to notice.
func (s *Scanner) Object(member func(key []byte) bool) bool {
	if !s.Byte('{') {
		return false
	}
	s.Space()
	if s.Byte('}') {
		return true
	}
	for {
		key, ok := s.Str()
		if !ok {
			return false
		}
		s.Space()
		if !s.Byte(':') {
			return false
		}
		s.Space()
		if !member(key) {
			return false
		}
		s.Space()
		if s.Byte('}') {
			return true
		}
		if !s.Byte(',') {
			return false
		}
		s.Space()
	}
}

// Array reads an array, calling elem with the scanner at each element,
// which elem reads. empty is true for [].
func (s *Scanner) Array(elem func() bool) (empty, ok bool) {
	if !s.Byte('[') {
		return false, false
	}
	s.Space()
	if s.Byte(']') {
		return true, true
	}
	for {
		if !elem() {
			return false, false
		}
		s.Space()
		if s.Byte(']') {
			return false, true
		}
		if !s.Byte(',') {
			return false, false
		}
		s.Space()
	}
}

// AppendString appends s quoted as encoding/json quotes it. Strings
// without anything to escape (the usual case) are copied; the others are
// left to encoding/json (its HTML-safe, control, U+2028/U+2029 and
// invalid UTF-8 escapes).
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return appendEscaped(b, s)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			return appendEscaped(b, s)
		}
		i += size
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendEscaped(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}
