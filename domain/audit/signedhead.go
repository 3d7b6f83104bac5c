package audit

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// SignedHeadVersion is the version of the signed head format and of the
// message signed (the tag "cairn.audit.head.v1").
const SignedHeadVersion = 1

// headTag starts the signed message: it names the format, and the zero
// byte ends it, so that no other message signed by the key reads alike.
const headTag = "cairn.audit.head.v1\x00"

// SignedHead is a chain head (seq and hash) with the time it was signed,
// signed by an ed25519 key kept outside the event store. Published apart
// from the store, it is an anchor nobody able to rewrite the store can
// forge: verifying the trail against it detects a truncated tail and a
// re-hashed suffix. Its JSON (one object per line where heads are kept) is
// {"v":1,"seq":N,"hash":"<hex>","time":"<RFC 3339>","key_id":"<hex>","sig":"<base64>"}.
type SignedHead struct {
	V     int       `json:"v"`
	Seq   uint64    `json:"seq"`
	Hash  Hash      `json:"hash"`
	Time  time.Time `json:"time"`   // when it was signed, UTC
	KeyID string    `json:"key_id"` // KeyID of the public key that verifies Sig
	Sig   []byte    `json:"sig"`    // the 64-byte ed25519 signature of Message (standard base64 in JSON)
}

// Head is the chain head the signed head names.
func (s SignedHead) Head() Head { return Head{Seq: s.Seq, Hash: s.Hash} }

// Message is the byte string the signature covers: the tag
// "cairn.audit.head.v1", a zero byte, seq (uint64), the 32 bytes of hash,
// the time as Unix seconds (int64) and nanoseconds (uint32), numbers
// big-endian.
func (s SignedHead) Message() []byte {
	b := make([]byte, 0, len(headTag)+8+len(s.Hash)+8+4)
	b = append(b, headTag...)
	b = binary.BigEndian.AppendUint64(b, s.Seq)
	b = append(b, s.Hash[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(s.Time.Unix()))
	b = binary.BigEndian.AppendUint32(b, uint32(s.Time.Nanosecond()))
	return b
}

// KeyID names a public key in signed heads: the first 16 hex digits of
// the SHA-256 of its 32 bytes.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// SignHead signs head at time t (kept in UTC, to the nanosecond) with key.
func SignHead(key ed25519.PrivateKey, head Head, t time.Time) SignedHead {
	s := SignedHead{V: SignedHeadVersion, Seq: head.Seq, Hash: head.Hash, Time: t.UTC().Round(0),
		KeyID: KeyID(key.Public().(ed25519.PublicKey))}
	s.Sig = ed25519.Sign(key, s.Message())
	return s
}

// AppendJSON appends the signed head's JSON line (without the newline).
func (s SignedHead) AppendJSON(b []byte) []byte {
	out, _ := json.Marshal(s) // nothing in a SignedHead fails to marshal
	return append(b, out...)
}

// Errors of signed heads, for errors.Is.
var (
	ErrUnknownKey   = errors.New("audit: signed head: no key of the keys file has its key_id")
	ErrBadSignature = errors.New("audit: signed head: the signature is not valid")
	ErrBadHead      = errors.New("audit: signed head: malformed")
)

// Keyring is the public keys signed heads are verified with, by key id.
// Several keys let heads signed before a key rotation still verify.
type Keyring map[string]ed25519.PublicKey

// PublicKeyLine is a public key as a keys file lists it:
// "ed25519 <standard base64 of the 32 bytes> key_id=<id>".
func PublicKeyLine(pub ed25519.PublicKey) string {
	return "ed25519 " + base64.StdEncoding.EncodeToString(pub) + " key_id=" + KeyID(pub)
}

// ParseKeyring reads a keys file: one key a line, "ed25519 <standard
// base64 of the 32-byte public key> [comment]"; blank lines and lines
// starting with # are ignored. A malformed line is an error naming it.
func ParseKeyring(r io.Reader) (Keyring, error) {
	k := Keyring{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "ed25519" {
			return nil, fmt.Errorf("keys file line %d: want \"ed25519 <base64 public key> [comment]\"", n)
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(fields[1])
		if err != nil || len(raw) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("keys file line %d: the public key is not the standard base64 of %d bytes", n, ed25519.PublicKeySize)
		}
		pub := ed25519.PublicKey(raw)
		k[KeyID(pub)] = pub
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("keys file: %w", err)
	}
	return k, nil
}

// Verify checks a signed head: its version, that its key id names a key
// of the ring, and its signature under that key.
func (k Keyring) Verify(s SignedHead) error {
	if s.V != SignedHeadVersion {
		return fmt.Errorf("%w: version %d (this build knows %d)", ErrBadHead, s.V, SignedHeadVersion)
	}
	pub, ok := k[s.KeyID]
	if !ok {
		return fmt.Errorf("%w (key_id %s: a key rotated out of the file, or a forged head)", ErrUnknownKey, s.KeyID)
	}
	if len(s.Sig) != ed25519.SignatureSize || !ed25519.Verify(pub, s.Message(), s.Sig) {
		return fmt.Errorf("%w under key %s", ErrBadSignature, s.KeyID)
	}
	return nil
}

// ParseSignedHead reads one signed head's JSON. Every field is required;
// hash and key_id must be lower-case hex, time RFC 3339.
func ParseSignedHead(line []byte) (SignedHead, error) {
	var raw struct {
		V     *int       `json:"v"`
		Seq   *uint64    `json:"seq"`
		Hash  *string    `json:"hash"`
		Time  *time.Time `json:"time"`
		KeyID *string    `json:"key_id"`
		Sig   *string    `json:"sig"`
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&raw); err != nil {
		return SignedHead{}, fmt.Errorf("%w: %v", ErrBadHead, err)
	}
	if raw.V == nil || raw.Seq == nil || raw.Hash == nil || raw.Time == nil || raw.KeyID == nil || raw.Sig == nil {
		return SignedHead{}, fmt.Errorf("%w: v, seq, hash, time, key_id and sig are all required", ErrBadHead)
	}
	s := SignedHead{V: *raw.V, Seq: *raw.Seq, Time: raw.Time.UTC(), KeyID: *raw.KeyID}
	if y := s.Time.Year(); y < 0 || y > 9999 {
		return SignedHead{}, fmt.Errorf("%w: time is outside years 0 to 9999 in UTC", ErrBadHead)
	}
	if *raw.Hash != strings.ToLower(*raw.Hash) || s.Hash.UnmarshalText([]byte(*raw.Hash)) != nil {
		return SignedHead{}, fmt.Errorf("%w: hash is not 64 lower-case hex digits", ErrBadHead)
	}
	if len(s.KeyID) != 16 || s.KeyID != strings.ToLower(s.KeyID) {
		return SignedHead{}, fmt.Errorf("%w: key_id is not 16 lower-case hex digits", ErrBadHead)
	}
	if _, err := hex.DecodeString(s.KeyID); err != nil {
		return SignedHead{}, fmt.Errorf("%w: key_id is not 16 lower-case hex digits", ErrBadHead)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(*raw.Sig)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return SignedHead{}, fmt.Errorf("%w: sig is not the standard base64 of %d bytes", ErrBadHead, ed25519.SignatureSize)
	}
	s.Sig = sig
	return s, nil
}

// HeadError names the signed head that failed: its line in the heads file
// and its seq.
type HeadError struct {
	Line int
	Seq  uint64
	Err  error
}

func (e *HeadError) Error() string {
	if e.Seq == 0 {
		return fmt.Sprintf("signed head on line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("signed head on line %d (seq %d): %v", e.Line, e.Seq, e.Err)
}

func (e *HeadError) Unwrap() error { return e.Err }

// VerifyHeads reads a heads file (NDJSON, one signed head a line; blank
// lines ignored), verifies every head against keys and returns them as
// anchors for Verify. The first head that does not parse or verify fails
// the whole file, named by a *HeadError; so do two valid heads that name
// different hashes for one seq (the key signed two histories).
func VerifyHeads(r io.Reader, keys Keyring) ([]Head, error) {
	var anchors []Head
	seen := map[uint64]Hash{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		s, err := ParseSignedHead(line)
		if err != nil {
			return nil, &HeadError{Line: n, Err: err}
		}
		if err := keys.Verify(s); err != nil {
			return nil, &HeadError{Line: n, Seq: s.Seq, Err: err}
		}
		if h, ok := seen[s.Seq]; ok && h != s.Hash {
			return nil, &HeadError{Line: n, Seq: s.Seq, Err: fmt.Errorf("%w: another signed head names hash %s for this seq", ErrBadHead, h)}
		}
		seen[s.Seq] = s.Hash
		anchors = append(anchors, s.Head())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("heads file: %w", err)
	}
	return anchors, nil
}
