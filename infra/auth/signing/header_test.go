package signing

import (
	"errors"
	"strings"
	"testing"
)

const sig64 = "cd7520a5f09ecd75082b4b63de123440b3de521250c6a796f3aefdc100b03eae"

func TestParseAuthorization(t *testing.T) {
	t.Parallel()
	ok := Credential{Method: "HMAC-SHA256", AccessKey: "AKIAIOSFODNN7EXAMPLE", Signature: sig64}
	tests := []struct {
		header string
		want   Credential
		reason Reason
	}{
		{header: "BackendAI signMethod=HMAC-SHA256, credential=AKIAIOSFODNN7EXAMPLE:" + sig64, want: ok},
		{header: "  BackendAI credential = AKIAIOSFODNN7EXAMPLE:" + sig64 + " ,signMethod=HMAC-SHA256  ", want: ok},
		{header: "BackendAI signMethod=hmac-sha256, credential=AKIAIOSFODNN7EXAMPLE:" + sig64 + ", extra=ignored",
			want: Credential{Method: "hmac-sha256", AccessKey: "AKIAIOSFODNN7EXAMPLE", Signature: sig64}},
		{header: "BackendAI signMethod=HMAC-SHA256, credential=AK=1:" + strings.ToUpper(sig64),
			want: Credential{Method: "HMAC-SHA256", AccessKey: "AK=1", Signature: strings.ToUpper(sig64)}},
		{header: "BackendAI signMethod=CAIRN1-HMAC-SHA256, credential=AKIAIOSFODNN7EXAMPLE:" + sig64,
			want: Credential{Method: "CAIRN1-HMAC-SHA256", AccessKey: "AKIAIOSFODNN7EXAMPLE", Signature: sig64}},
		{header: "BackendAI signMethod=CAIRN1-HMAC-SHA1, credential=AK:" + sig64, reason: ReasonUnsupportedMethod},
		{header: "", reason: ReasonMissingHeader},
		{header: "   ", reason: ReasonMissingHeader},
		{header: "Bearer abc", reason: ReasonUnsupportedScheme},
		{header: "backendai signMethod=HMAC-SHA256, credential=AK:" + sig64, reason: ReasonUnsupportedScheme},
		{header: "Sorna signMethod=HMAC-SHA256, credential=AK:" + sig64, reason: ReasonUnsupportedScheme},
		{header: "BackendAI", reason: ReasonMalformedHeader},
		{header: "BackendAI signMethod", reason: ReasonMalformedHeader},
		{header: "BackendAI signMethod=HMAC-SHA256,, credential=AK:" + sig64, reason: ReasonMalformedHeader},
		{header: "BackendAI =x, signMethod=HMAC-SHA256, credential=AK:" + sig64, reason: ReasonMalformedHeader},
		{header: "BackendAI signMethod=HMAC-SHA256, signMethod=HMAC-SHA256, credential=AK:" + sig64, reason: ReasonMalformedHeader},
		{header: "BackendAI credential=AK:" + sig64, reason: ReasonMalformedHeader},
		{header: "BackendAI signMethod=HMAC-SHA1, credential=AK:" + sig64, reason: ReasonUnsupportedMethod},
		{header: "BackendAI signMethod=HMAC-ſHA256, credential=AK:" + sig64, reason: ReasonUnsupportedMethod},
		{header: "BackendAI signMethod=HMAC-SHA256", reason: ReasonMissingCredential},
		{header: "BackendAI signMethod=HMAC-SHA256, credential=AK", reason: ReasonMissingCredential},
		{header: "BackendAI signMethod=HMAC-SHA256, credential=:" + sig64, reason: ReasonMissingCredential},
		{header: "BackendAI signMethod=HMAC-SHA256, credential=AK:", reason: ReasonMissingCredential},
		{header: "BackendAI signMethod=HMAC-SHA256, credential=AK:abc", reason: ReasonMalformedHeader},
		{header: "BackendAI signMethod=HMAC-SHA256, credential=AK:" + sig64[:63] + "g", reason: ReasonMalformedHeader},
		{header: "BackendAI signMethod=HMAC-SHA256, credential=A K:" + sig64, reason: ReasonMalformedHeader},
		{header: "BackendAI signMethod=HMAC-SHA256, credential=Ä:" + sig64, reason: ReasonMalformedHeader},
		{header: "BackendAI signMethod=HMAC-SHA256, credential=" + strings.Repeat("A", 129) + ":" + sig64, reason: ReasonMalformedHeader},
		{header: "BackendAI signMethod=HMAC-SHA256, credential=AK:" + sig64 + ", pad=" + strings.Repeat("x", 1024), reason: ReasonMalformedHeader},
	}
	for _, tc := range tests {
		got, err := ParseAuthorization(tc.header)
		if tc.reason != ReasonNone {
			var e *Error
			if !errors.As(err, &e) || e.Reason != tc.reason {
				t.Errorf("%.60q: err %v, want %v", tc.header, err, tc.reason)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%.60q: got %+v, %v; want %+v", tc.header, got, err, tc.want)
		}
		if wantMode := map[bool]Mode{true: ModeStrict, false: ModeCompat}[strings.Contains(tc.header, "CAIRN1")]; got.Mode() != wantMode {
			t.Errorf("%.60q: mode %v, want %v", tc.header, got.Mode(), wantMode)
		}
	}
}

func TestHasScheme(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]bool{
		"BackendAI signMethod=x": true, " BackendAI x": true, "BackendAI": true,
		"Bearer x": false, "": false, "BackendAIx y": false,
	} {
		if got := HasScheme(h); got != want {
			t.Errorf("HasScheme(%q) = %v", h, got)
		}
	}
}

// FuzzParseAuthorization: parsing never panics; a refusal is an *Error
// with a reason; what is accepted renders back to a header that parses to
// the same credential.
func FuzzParseAuthorization(f *testing.F) {
	for _, seed := range []string{
		"BackendAI signMethod=HMAC-SHA256, credential=AKIAIOSFODNN7EXAMPLE:" + sig64,
		"BackendAI credential=AK=:" + sig64 + ",signMethod=hmac-sha256,x=y",
		"BackendAI signMethod=HMAC-SHA256, credential=AK:" + sig64 + ", credential=AK:" + sig64,
		"Bearer token", "BackendAI", "BackendAI ,,,", "BackendAI signMethod==, credential=::",
		"", "\x00", "BackendAI signMethod=HMAC-SHA256,credential=\xff:" + sig64,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		c, err := ParseAuthorization(header)
		if err != nil {
			if ReasonOf(err) == ReasonNone {
				t.Fatalf("%q: refusal without a reason: %v", header, err)
			}
			return
		}
		if c.AccessKey == "" || len(c.Signature) != signatureLen || (!asciiEqualFold(c.Method, MethodHMACSHA256) && !asciiEqualFold(c.Method, MethodStrict)) {
			t.Fatalf("%q: accepted an incomplete credential %+v", header, c)
		}
		if (c.Mode() == ModeStrict) != asciiEqualFold(c.Method, MethodStrict) {
			t.Fatalf("%q: method %q but mode %v", header, c.Method, c.Mode())
		}
		back, err := ParseAuthorization(c.String())
		if err != nil {
			t.Fatalf("%q: rendered %q does not parse: %v", header, c.String(), err)
		}
		if back != c {
			t.Fatalf("%q: round trip %+v != %+v", header, back, c)
		}
	})
}
