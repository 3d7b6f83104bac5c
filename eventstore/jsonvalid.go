package eventstore

import "encoding/binary"

// validJSON reports whether data is one JSON value (with optional white
// space around it), exactly as encoding/json.Valid does: the same grammar,
// strings' bytes not checked for UTF-8, the same nesting limit. It is
// written for speed: every append validates its events' data, and the
// audit trail appends hundreds of kilobytes a second; json.Valid's scanner
// costs a function call per byte. A fuzz test holds it to json.Valid.
func validJSON(data []byte) bool {
	v := validator{data: data}
	v.space()
	if !v.value() {
		return false
	}
	v.space()
	return v.i == len(data)
}

// maxNesting is encoding/json's limit on nested arrays and objects.
const maxNesting = 10000

type validator struct {
	data  []byte
	i     int
	depth int
}

func (v *validator) space() {
	for v.i < len(v.data) {
		switch v.data[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
		default:
			return
		}
	}
}

func (v *validator) value() bool {
	if v.i >= len(v.data) {
		return false
	}
	switch c := v.data[v.i]; {
	case c == '"':
		return v.str()
	case c == '{':
		return v.object()
	case c == '[':
		return v.array()
	case c == '-' || (c >= '0' && c <= '9'):
		return v.number()
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	}
	return false
}

func (v *validator) literal(word string) bool {
	if len(v.data)-v.i < len(word) || string(v.data[v.i:v.i+len(word)]) != word {
		return false
	}
	v.i += len(word)
	return true
}

// plain marks the bytes a string holds as they are: not a quote, not a
// backslash, not a control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// special8 is non-zero when one of the eight bytes of x is not plain: a
// control character, a quote or a backslash (it may also flag plain bytes
// after such a byte, never a run of eight plain ones).
func special8(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	return ((x-ones*0x20) & ^x | (quote-ones) & ^quote | (backslash-ones) & ^backslash) & highs
}

func (v *validator) str() bool {
	v.i++ // the opening quote
	for {
		// Eight bytes at a time while they are plain (most of a string),
		// then byte by byte.
		for v.i+8 <= len(v.data) && special8(binary.LittleEndian.Uint64(v.data[v.i:])) == 0 {
			v.i += 8
		}
		for v.i < len(v.data) && plain[v.data[v.i]] {
			v.i++
		}
		if v.i >= len(v.data) {
			return false
		}
		switch v.data[v.i] {
		case '"':
			v.i++
			return true
		case '\\':
			v.i++
			if v.i >= len(v.data) {
				return false
			}
			switch v.data[v.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				v.i++
			case 'u':
				if len(v.data)-v.i < 5 {
					return false
				}
				for _, h := range v.data[v.i+1 : v.i+5] {
					if !isHex(h) {
						return false
					}
				}
				v.i += 5
			default:
				return false
			}
		default:
			return false // a control character
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (v *validator) digits() int {
	start := v.i
	for v.i < len(v.data) && v.data[v.i] >= '0' && v.data[v.i] <= '9' {
		v.i++
	}
	return v.i - start
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (v *validator) number() bool {
	if v.data[v.i] == '-' {
		v.i++
	}
	if v.i >= len(v.data) {
		return false
	}
	if v.data[v.i] == '0' {
		v.i++
	} else if v.digits() == 0 {
		return false
	}
	if v.i < len(v.data) && v.data[v.i] == '.' {
		v.i++
		if v.digits() == 0 {
			return false
		}
	}
	if v.i < len(v.data) && (v.data[v.i] == 'e' || v.data[v.i] == 'E') {
		v.i++
		if v.i < len(v.data) && (v.data[v.i] == '+' || v.data[v.i] == '-') {
			v.i++
		}
		if v.digits() == 0 {
			return false
		}
	}
	return true
}

func (v *validator) enter() bool {
	v.depth++
	v.i++
	return v.depth <= maxNesting
}

func (v *validator) object() bool {
	if !v.enter() {
		return false
	}
	v.space()
	if v.i < len(v.data) && v.data[v.i] == '}' {
		v.i++
		v.depth--
		return true
	}
	for {
		if v.i >= len(v.data) || v.data[v.i] != '"' || !v.str() {
			return false
		}
		v.space()
		if v.i >= len(v.data) || v.data[v.i] != ':' {
			return false
		}
		v.i++
		v.space()
		if !v.value() {
			return false
		}
		if more, ok := v.after('}'); !more {
			return ok
		}
	}
}

func (v *validator) array() bool {
	if !v.enter() {
		return false
	}
	v.space()
	if v.i < len(v.data) && v.data[v.i] == ']' {
		v.i++
		v.depth--
		return true
	}
	for {
		if !v.value() {
			return false
		}
		if more, ok := v.after(']'); !more {
			return ok
		}
	}
}

// after reads what follows a member or an element: a comma (more, ok:
// another follows, spaces skipped) or end (ok: the container is closed).
// Anything else is invalid (neither).
func (v *validator) after(end byte) (more, ok bool) {
	v.space()
	if v.i >= len(v.data) {
		return false, false
	}
	switch v.data[v.i] {
	case ',':
		v.i++
		v.space()
		return true, true
	case end:
		v.i++
		v.depth--
		return false, true
	}
	return false, false
}
