package plainjson

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzAppendString: strings are quoted as encoding/json quotes them.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "alice", "a<b>&c", "quote\"back\\slash", "tab\tnew\nline\x01\x7f", "naïve 東京",
		"line\u2028sep\u2029", "bad\xffutf8", "\xed\xa0\x80", "🚀", "\xf0\x9f\x9a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got[1:]) != string(want) {
			t.Fatalf("AppendString(%q) = %s, json.Marshal: %s", s, got[1:], want)
		}
	})
}

// TestScanner: what each method takes, and where it leaves the scanner.
func TestScanner(t *testing.T) {
	for _, c := range []struct {
		in   string
		read func(*Scanner) bool
		ok   bool
		end  int
	}{
		{`"abc" `, func(s *Scanner) bool { v, ok := s.Str(); return ok && string(v) == "abc" }, true, 5},
		{`"é"`, func(s *Scanner) bool { _, ok := s.Str(); return ok }, true, 4},
		{"\"\xff\"", func(s *Scanner) bool { _, ok := s.Str(); return ok }, false, 0},
		{`"a\"b"`, func(s *Scanner) bool { _, ok := s.Str(); return ok }, false, 0},
		{"\"a\tb\"", func(s *Scanner) bool { _, ok := s.Str(); return ok }, false, 0},
		{`"abc`, func(s *Scanner) bool { _, ok := s.Str(); return ok }, false, 0},
		{`-12,`, func(s *Scanner) bool { v, ok := s.Int(64); return ok && v == -12 }, true, 3},
		{`-0`, func(s *Scanner) bool { v, ok := s.Int(64); return ok && v == 0 }, true, 2},
		{`012`, func(s *Scanner) bool { _, ok := s.Int(64); return ok }, false, 0},
		{`1.5`, func(s *Scanner) bool { _, ok := s.Int(64); return ok }, false, 0},
		{`1e3`, func(s *Scanner) bool { _, ok := s.Int(64); return ok }, false, 0},
		{`-`, func(s *Scanner) bool { _, ok := s.Int(64); return ok }, false, 0},
		{`128`, func(s *Scanner) bool { _, ok := s.Int(8); return ok }, false, 0},
		{`-1`, func(s *Scanner) bool { _, ok := s.Uint(); return ok }, false, 0},
		{`18446744073709551615`, func(s *Scanner) bool { v, ok := s.Uint(); return ok && v == 1<<64-1 }, true, 20},
		{`null]`, (*Scanner).Null, true, 4},
		{`nul`, (*Scanner).Null, false, 0},
		{`{ }`, func(s *Scanner) bool { return s.Object(func([]byte) bool { return false }) }, true, 3},
		{`{"a" : "b" , "c":"d"}x`, func(s *Scanner) bool {
			n := 0
			return s.Object(func(key []byte) bool { n++; _, ok := s.Str(); return ok }) && n == 2
		}, true, 21},
		{`{"a":"b",}`, func(s *Scanner) bool { return s.Object(func([]byte) bool { _, ok := s.Str(); return ok }) }, false, 0},
		{`{"a" "b"}`, func(s *Scanner) bool { return s.Object(func([]byte) bool { _, ok := s.Str(); return ok }) }, false, 0},
		{`[ ]`, func(s *Scanner) bool { empty, ok := s.Array(func() bool { return false }); return ok && empty }, true, 3},
		{`[1, 2]`, func(s *Scanner) bool {
			empty, ok := s.Array(func() bool { _, ok := s.Int(64); return ok })
			return ok && !empty
		}, true, 6},
		{`[1,]`, func(s *Scanner) bool { _, ok := s.Array(func() bool { _, ok := s.Int(64); return ok }); return ok }, false, 0},
		{`[1 2]`, func(s *Scanner) bool { _, ok := s.Array(func() bool { _, ok := s.Int(64); return ok }); return ok }, false, 0},
	} {
		s := Scanner{Data: []byte(c.in)}
		if ok := c.read(&s); ok != c.ok || (ok && s.I != c.end) {
			t.Errorf("%q: ok %v at %d, want %v at %d", c.in, ok, s.I, c.ok, c.end)
		}
	}
}

// FuzzStr: a string the scanner takes is one encoding/json reads alike,
// and one it declines has an escape, a control character or invalid
// UTF-8, or is not closed.
func FuzzStr(f *testing.F) {
	for _, s := range []string{`"abc"`, `"0195a0c0-0000-7000-8000-0000000000a1"`, `"naïve 東京"`, `"a\"b"`, "\"tab\there\"",
		"\"bad\xff\"", `"2026-11-21T10:00:00.123456789+09:00"`, `"unclosed`, `"exactly8"`, `"seven7""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := Scanner{Data: data}
		v, ok := s.Str()
		end := bytes.IndexByte(data[min(1, len(data)):], '"') + 1
		if !ok {
			if end > 0 && data[0] == '"' && utf8.Valid(data[1:end]) && !bytes.ContainsFunc(data[1:end], func(r rune) bool { return r < 0x20 || r == '\\' }) {
				t.Fatalf("%q: declined a plain string", data)
			}
			return
		}
		var want string
		if err := json.Unmarshal(data[:s.I], &want); err != nil || string(v) != want || s.I != end+1 {
			t.Fatalf("%q: read %q to %d, json.Unmarshal %q (%v)", data, v, s.I, want, err)
		}
	})
}
