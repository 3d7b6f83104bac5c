package token

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/cairnhq/cairn/domain"
)

// Kind says what a token is for; it is visible in the token's prefix.
type Kind string

const (
	Login  Kind = "login"  // issued by email + password login (the Web-UI)
	Bearer Kind = "bearer" // issued for scripts
	// Enrollment tokens let an agent enroll its bus key once (POST
	// /v1/agent-enrollments); they authenticate no API request.
	Enrollment Kind = "enrollment"
)

var prefixes = map[Kind]string{Login: "cairn_l_", Bearer: "cairn_b_", Enrollment: "cairn_e_"}

// Prefix is the fixed start of tokens of kind k ("" for an unknown kind).
func (k Kind) Prefix() string { return prefixes[k] }

const (
	randomBytes = 32
	encodedLen  = 43 // base64url of 32 bytes, unpadded
)

// Errors, of kind domain.KindUnauthenticated.
var (
	ErrMalformed = &domain.Error{Op: "token", Kind: domain.KindUnauthenticated, Message: "not a Cairn token"}
	ErrMismatch  = &domain.Error{Op: "token", Kind: domain.KindUnauthenticated, Message: "unknown or revoked token"}
	ErrExpired   = &domain.Error{Op: "token", Kind: domain.KindUnauthenticated, Message: "token expired; log in again"}
)

// Digest is the SHA-256 of a token's full string: what the server stores
// and looks tokens up by. Its text form is lower-case hex.
type Digest [sha256.Size]byte

// Of hashes a token string (whatever its form; Parse checks the form).
func Of(secret string) Digest { return sha256.Sum256([]byte(secret)) }

func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// Equal compares in constant time.
func (d Digest) Equal(o Digest) bool { return subtle.ConstantTimeCompare(d[:], o[:]) == 1 }

func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

func (d *Digest) UnmarshalText(b []byte) error {
	if len(b) != 2*sha256.Size {
		return fmt.Errorf("token digest: want %d hex digits, got %d", 2*sha256.Size, len(b))
	}
	_, err := hex.Decode(d[:], b)
	return err
}

// Token is what the server keeps of an issued token: never the token itself.
type Token struct {
	Kind      Kind      `json:"kind"`
	Digest    Digest    `json:"digest"`
	IssuedAt  time.Time `json:"issued_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Issue makes a new token of kind k, valid from now for ttl. It returns the
// secret to hand to the client once, and the Token to store.
func Issue(k Kind, now time.Time, ttl time.Duration) (secret string, t Token, err error) {
	prefix := k.Prefix()
	if prefix == "" {
		return "", Token{}, domain.Invalid("token.issue", "kind", "unknown token kind %q", k)
	}
	if ttl <= 0 {
		return "", Token{}, domain.Invalid("token.issue", "ttl", "must be positive, not %s", ttl)
	}
	var raw [randomBytes]byte
	rand.Read(raw[:]) // never fails (crypto/rand, Go ≥ 1.24)
	secret = prefix + base64.RawURLEncoding.EncodeToString(raw[:])
	return secret, Token{Kind: k, Digest: Of(secret), IssuedAt: now, ExpiresAt: now.Add(ttl)}, nil
}

// Parse checks that secret has the form of a Cairn token and returns its
// kind and digest, to look the stored Token up with.
func Parse(secret string) (Kind, Digest, error) {
	for k, prefix := range prefixes {
		rest, ok := strings.CutPrefix(secret, prefix)
		if !ok {
			continue
		}
		if len(rest) != encodedLen {
			return "", Digest{}, ErrMalformed
		}
		if _, err := base64.RawURLEncoding.Strict().DecodeString(rest); err != nil {
			return "", Digest{}, ErrMalformed
		}
		return k, Of(secret), nil
	}
	return "", Digest{}, ErrMalformed
}

// Valid reports ErrExpired once now reaches ExpiresAt.
func (t Token) Valid(now time.Time) error {
	if !now.Before(t.ExpiresAt) {
		return ErrExpired
	}
	return nil
}

// Verify checks a presented secret against the stored token: its form, its
// digest (constant time) and kind, then its expiry at now.
func (t Token) Verify(secret string, now time.Time) error {
	k, d, err := Parse(secret)
	if err != nil {
		return err
	}
	if !d.Equal(t.Digest) || k != t.Kind {
		return ErrMismatch
	}
	return t.Valid(now)
}
