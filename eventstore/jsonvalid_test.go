package eventstore

import (
	"encoding/json"
	"strings"
	"testing"
)

var jsonCases = []string{
	``, ` `, `null`, `true`, `false`, `nul`, `truex`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e`, `1e+`, `1E-7`, `-12.5e10`, `.5`, `+1`,
	`""`, `"a"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\uD83D\uDE00"`, `"\u12"`, `"\x"`, "\"tab\tin\"", "\"\x7f\xff\xfe\"", `"unterminated`,
	`{}`, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, ` { "a" : [ 1 , 2 , { } ] } `, `[]`, `[1,]`, `[,1]`, `[1 2]`,
	`[[[]]]`, `[[[]]`, `{"a":{"b":{"c":null}}}`, `1 2`, "\n\t{\r}\n", `"\uD800"`, `{"":""}`, `[true,false,null]`,
	`{"a":1,"a":2}`, `"\uDC00\uD800"`, "\"\xed\xa0\x80\"", "{\"\xff\":\"\xc3\"}", `"\u0000"`, "\"\x00\"", `1e400`, `-0.0e-0`, `[1]]`, "\ufeff{}",
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

func TestValidJSONIsJSONValid(t *testing.T) {
	for _, c := range jsonCases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("validJSON(%.60q) = %v, json.Valid = %v", c, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, c := range jsonCases {
		if len(c) < 200 {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := validJSON(data), json.Valid(data); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid = %v", data, got, want)
		}
	})
}

func BenchmarkValidJSON(b *testing.B) {
	rec := `{"v":1,"seq":123456,"time":"2026-11-21T12:00:00.123456789Z","user_id":"0195a0c0-0000-7000-8000-000000000001",` +
		`"access_key":"AKIAIOSFODNN7EXAMPLE","action":"GET /v1/auth/whoami","entity_type":"auth","client_ip":"127.0.0.1",` +
		`"outcome":"success","status":200,"duration_ns":123456,"request_id":"0195a0c0-0000-7000-8000-0000000000aa",` +
		`"prev_hash":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","hash":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","source_position":42}`
	data := []byte(`{"records":[` + strings.Repeat(rec+",", 199) + rec + `]}`)
	b.Run("validJSON", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			validJSON(data)
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			json.Valid(data)
		}
	})
}
