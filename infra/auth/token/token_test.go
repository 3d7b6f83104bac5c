package token

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func TestIssueVerify(t *testing.T) {
	t.Parallel()
	for _, k := range []Kind{Login, Bearer} {
		secret, tok, err := Issue(k, t0, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(secret, k.Prefix()) || len(secret) != len(k.Prefix())+43 {
			t.Fatalf("secret %q", secret)
		}
		if strings.Contains(tok.Digest.String(), secret) || tok.Digest != Of(secret) {
			t.Fatalf("digest %s", tok.Digest)
		}
		if !tok.IssuedAt.Equal(t0) || !tok.ExpiresAt.Equal(t0.Add(time.Hour)) || tok.Kind != k {
			t.Fatalf("token %+v", tok)
		}
		gotKind, gotDigest, err := Parse(secret)
		if err != nil || gotKind != k || !gotDigest.Equal(tok.Digest) {
			t.Fatalf("Parse = %v, %v, %v", gotKind, gotDigest, err)
		}
		for _, tc := range []struct {
			name   string
			secret string
			now    time.Time
			want   error
		}{
			{"fresh", secret, t0, nil},
			{"just before expiry", secret, t0.Add(time.Hour - time.Nanosecond), nil},
			{"at expiry", secret, t0.Add(time.Hour), ErrExpired},
			{"later", secret, t0.Add(48 * time.Hour), ErrExpired},
			// Not the last character: it carries only 4 bits of the
			// digest, and some changes there are not canonical base64
			// (malformed, not a mismatch).
			{"one character changed", secret[:len(secret)-2] + flip(secret[len(secret)-2]) + secret[len(secret)-1:], t0, ErrMismatch},
			{"other kind's prefix", otherPrefix(k) + strings.TrimPrefix(secret, k.Prefix()), t0, ErrMismatch},
			{"truncated", secret[:len(secret)-1], t0, ErrMalformed},
			{"empty", "", t0, ErrMalformed},
		} {
			err := tok.Verify(tc.secret, tc.now)
			if !errors.Is(err, tc.want) {
				t.Errorf("%s %s: err %v, want %v", k, tc.name, err, tc.want)
			}
			if err != nil && domain.KindOf(err) != domain.KindUnauthenticated {
				t.Errorf("%s: kind %v", tc.name, domain.KindOf(err))
			}
		}
	}
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func otherPrefix(k Kind) string {
	if k == Login {
		return Bearer.Prefix()
	}
	return Login.Prefix()
}

func TestIssueIsRandom(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		s, _, err := Issue(Bearer, t0, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if seen[s] {
			t.Fatalf("token %s issued twice", s)
		}
		seen[s] = true
	}
}

func TestIssueRefuses(t *testing.T) {
	t.Parallel()
	if _, _, err := Issue("api", t0, time.Hour); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("unknown kind: %v", err)
	}
	if _, _, err := Issue(Login, t0, 0); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("zero ttl: %v", err)
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	valid := Login.Prefix() + strings.Repeat("A", 43)
	if _, _, err := Parse(valid); err != nil {
		t.Fatalf("%q: %v", valid, err)
	}
	for _, s := range []string{
		"", "cairn_l_", "cairn_x_" + strings.Repeat("A", 43), "Bearer " + valid,
		valid + "A", Login.Prefix() + strings.Repeat("A", 42) + "=", Login.Prefix() + strings.Repeat("+", 43),
		Login.Prefix() + strings.Repeat("A", 42) + "B", // stray bits in the last character
	} {
		if _, _, err := Parse(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: err %v", s, err)
		}
	}
}

func TestTokenJSON(t *testing.T) {
	t.Parallel()
	_, tok, _ := Issue(Login, t0, time.Hour)
	b, err := json.Marshal(tok)
	if err != nil {
		t.Fatal(err)
	}
	var back Token
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Digest != tok.Digest || back.Kind != tok.Kind || !back.ExpiresAt.Equal(tok.ExpiresAt) {
		t.Fatalf("%s -> %+v", b, back)
	}
	if !strings.Contains(string(b), `"digest":"`+tok.Digest.String()+`"`) {
		t.Fatalf("digest not hex in %s", b)
	}
	var d Digest
	if err := d.UnmarshalText([]byte("abc")); err == nil {
		t.Fatal("short digest accepted")
	}
	if err := d.UnmarshalText([]byte(strings.Repeat("zz", 32))); err == nil {
		t.Fatal("non-hex digest accepted")
	}
}

// FuzzParse: whatever a client sends, Parse never panics and accepts only
// a known prefix followed by 43 base64url characters.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "cairn_l_" + strings.Repeat("A", 43), "cairn_b_" + strings.Repeat("_-", 21) + "A", "cairn_l_\xff", "Bearer x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, d, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if !strings.HasPrefix(s, k.Prefix()) || len(s) != len(k.Prefix())+43 || d != Of(s) {
			t.Fatalf("%q accepted as %s %s", s, k, d)
		}
	})
}
