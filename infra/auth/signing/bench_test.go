package signing

import (
	"net/http"
	"testing"
)

// BenchmarkVerify: one signed GET verified end to end (header parse, date
// parse, map lookup, key derivation, HMAC, constant-time compare).
func BenchmarkVerify(b *testing.B) {
	keys := map[string]Secret{testAccessKey: {SecretKey: testSecretKey, Active: true}}
	v := verifier(testNow, keys)
	in := incoming(signed(b, testAccessKey, testSecretKey, FormatDate(testNow)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyParallel: the same from every core.
func BenchmarkVerifyParallel(b *testing.B) {
	keys := map[string]Secret{testAccessKey: {SecretKey: testSecretKey, Active: true}}
	v := verifier(testNow, keys)
	h := signed(b, testAccessKey, testSecretKey, FormatDate(testNow))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		in := incoming(h.Clone())
		for pb.Next() {
			if _, err := v.Verify(b.Context(), in); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkSignHTTP(b *testing.B) {
	req, _ := http.NewRequest(http.MethodGet, "http://cairn:8080/v1/sessions?limit=5", nil)
	b.ReportAllocs()
	for b.Loop() {
		if err := SignHTTP(req, testAccessKey, testSecretKey, testVersion, testNow); err != nil {
			b.Fatal(err)
		}
	}
}
