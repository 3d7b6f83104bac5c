package audit

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// testKey is a fixed key (seed of bytes n, n+1...), test-only.
func testKey(n byte) ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = n + byte(i)
	}
	return ed25519.NewKeyFromSeed(seed)
}

func pub(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

// keysFile is a keys file listing the public keys of keys.
func keysFile(keys ...ed25519.PrivateKey) string {
	var b strings.Builder
	b.WriteString("# test keys\n\n")
	for _, k := range keys {
		b.WriteString(PublicKeyLine(pub(k)) + "\n")
	}
	return b.String()
}

func keyring(t *testing.T, keys ...ed25519.PrivateKey) Keyring {
	t.Helper()
	k, err := ParseKeyring(strings.NewReader(keysFile(keys...)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// headsFile is the NDJSON of heads signed with key at the given records.
func headsFile(key ed25519.PrivateKey, at ...Record) string {
	var b []byte
	for _, r := range at {
		b = SignHead(key, r.Head(), time.Date(2026, 11, 27, 14, 0, int(r.Seq), 123456789, time.UTC)).AppendJSON(b)
		b = append(b, '\n')
	}
	return string(b)
}

// TestSignedHeadFormat pins the JSON line and the signed message to the
// shared format, built here byte by byte from its description.
func TestSignedHeadFormat(t *testing.T) {
	t.Parallel()
	key := testKey(1)
	var h Hash
	for i := range h {
		h[i] = byte(i)
	}
	at := time.Date(2026, 11, 27, 14, 15, 16, 987654321, time.FixedZone("CET", 3600))
	s := SignHead(key, Head{Seq: 1042, Hash: h}, at)

	var msg []byte
	msg = append(msg, "cairn.audit.head.v1"...)
	msg = append(msg, 0)
	msg = binary.BigEndian.AppendUint64(msg, 1042)
	msg = append(msg, h[:]...)
	msg = binary.BigEndian.AppendUint64(msg, uint64(at.Unix()))
	msg = binary.BigEndian.AppendUint32(msg, 987654321)
	if !bytes.Equal(s.Message(), msg) {
		t.Fatalf("message\n%x, want\n%x", s.Message(), msg)
	}
	sum := sha256.Sum256(pub(key))
	if s.KeyID != hex.EncodeToString(sum[:])[:16] {
		t.Fatalf("key id %s", s.KeyID)
	}
	if !ed25519.Verify(pub(key), msg, s.Sig) {
		t.Fatal("the signature does not verify under the public key")
	}
	want := fmt.Sprintf(`{"v":1,"seq":1042,"hash":"%s","time":"2026-11-27T13:15:16.987654321Z","key_id":"%s","sig":"%s"}`,
		hex.EncodeToString(h[:]), s.KeyID, base64.StdEncoding.EncodeToString(s.Sig))
	if got := string(s.AppendJSON(nil)); got != want {
		t.Fatalf("JSON\n%s, want\n%s", got, want)
	}
	back, err := ParseSignedHead([]byte(want))
	if err != nil {
		t.Fatal(err)
	}
	if err := keyring(t, key).Verify(back); err != nil {
		t.Fatalf("parsed back: %v", err)
	}
	if wantLine := "ed25519 " + base64.StdEncoding.EncodeToString(pub(key)) + " key_id=" + s.KeyID; PublicKeyLine(pub(key)) != wantLine {
		t.Fatalf("public key line %q", PublicKeyLine(pub(key)))
	}
}

func TestSignedHeadRefusals(t *testing.T) {
	t.Parallel()
	key, other := testKey(1), testKey(100)
	ring := keyring(t, key)
	good := SignHead(key, Head{Seq: 7, Hash: Hash{7}}, time.Unix(1_800_000_000, 5))
	for _, tc := range []struct {
		name string
		head SignedHead
		want error
	}{
		{"seq changed", func() SignedHead { s := good; s.Seq++; return s }(), ErrBadSignature},
		{"hash changed", func() SignedHead { s := good; s.Hash[0] ^= 1; return s }(), ErrBadSignature},
		{"time changed by a nanosecond", func() SignedHead { s := good; s.Time = s.Time.Add(1); return s }(), ErrBadSignature},
		{"signature cut", func() SignedHead { s := good; s.Sig = s.Sig[:63]; return s }(), ErrBadSignature},
		{"unknown key", SignHead(other, good.Head(), good.Time), ErrUnknownKey},
		{"key id of a listed key, signed by another", func() SignedHead { s := SignHead(other, good.Head(), good.Time); s.KeyID = good.KeyID; return s }(), ErrBadSignature},
		{"version 2", func() SignedHead { s := good; s.V = 2; return s }(), ErrBadHead},
	} {
		if err := ring.Verify(tc.head); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := ring.Verify(good); err != nil {
		t.Fatal(err)
	}
}

func TestParseSignedHeadRefusesMalformed(t *testing.T) {
	t.Parallel()
	good := string(SignHead(testKey(1), Head{Seq: 3, Hash: Hash{3}}, time.Unix(1_800_000_000, 0)).AppendJSON(nil))
	for _, line := range []string{
		``, `{}`, `[]`, `not json`,
		strings.Replace(good, `"v":1,`, ``, 1),
		strings.Replace(good, `"seq":3`, `"seq":-3`, 1),
		strings.Replace(good, `"hash":"03`, `"hash":"3`, 1),
		strings.Replace(good, `"hash":"03`, `"hash":"0A`, 1),
		strings.Replace(good, `"key_id":"`, `"key_id":"00`, 1),
		strings.Replace(good, `"sig":"`, `"sig":"AAAA`, 1),
		strings.Replace(good, `"time":"`, `"time":"x`, 1),
		strings.Replace(good, `}`, `,"extra":1}`, 1),
		strings.Replace(good, `"time":"2027-01-15T08:00:00Z"`, `"time":"9999-12-31T23:59:59-23:59"`, 1),
	} {
		if line == good {
			t.Fatal("a replacement did not apply")
		}
		if _, err := ParseSignedHead([]byte(line)); !errors.Is(err, ErrBadHead) {
			t.Errorf("%s: %v, want ErrBadHead", line, err)
		}
	}
}

func TestParseKeyring(t *testing.T) {
	t.Parallel()
	k1, k2 := testKey(1), testKey(2)
	ring, err := ParseKeyring(strings.NewReader("# keys\n\n" + PublicKeyLine(pub(k1)) + "\n   \n" +
		"ed25519 " + base64.StdEncoding.EncodeToString(pub(k2)) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ring) != 2 || !ring[KeyID(pub(k1))].Equal(pub(k1)) || !ring[KeyID(pub(k2))].Equal(pub(k2)) {
		t.Fatalf("ring %v", ring)
	}
	for _, bad := range []string{"rsa AAAA\n", "ed25519\n", "ed25519 AAAA\n", "ed25519 " + base64.RawStdEncoding.EncodeToString(pub(k1)) + "\n"} {
		if _, err := ParseKeyring(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: %v, want an error naming line 1", bad, err)
		}
	}
}

// TestHeadsDetectTruncationAndRehashing runs the chain's verification
// against signed heads as anchors: the two tamperings the chain alone
// cannot show.
func TestHeadsDetectTruncationAndRehashing(t *testing.T) {
	t.Parallel()
	key := testKey(1)
	records := chain(t, 30)
	heads := headsFile(key, records[9], records[19], records[29]) // seq 10, 20, 30
	anchors, err := VerifyHeads(strings.NewReader(heads), keyring(t, key))
	if err != nil {
		t.Fatal(err)
	}
	expectProblem(t, records, anchors, ProblemNone, 0)

	// The last 5 records removed: consistent alone, truncated against the head at 30.
	expectProblem(t, records[:25], nil, ProblemNone, 0)
	expectProblem(t, records[:25], anchors, ProblemTruncated, 30)

	// Record 12 rewritten and every record after it re-hashed: consistent
	// alone, altered at the first head covering it (20).
	rehashed := slices.Clone(records)
	rehashed[11].Action = "GET /v1/nothing-to-see"
	tail, _, err := SealAll(rehashed[10].Head(), rehashed[11:])
	if err != nil {
		t.Fatal(err)
	}
	copy(rehashed[11:], tail)
	expectProblem(t, rehashed, nil, ProblemNone, 0)
	expectProblem(t, rehashed, anchors, ProblemAltered, 20)
}

// TestHeadsKeyRotation: heads signed by key 1, then by key 2 (rotated);
// a keys file with both verifies them all, one with key 2 only refuses
// the old heads, naming the first one.
func TestHeadsKeyRotation(t *testing.T) {
	t.Parallel()
	k1, k2 := testKey(1), testKey(2)
	records := chain(t, 40)
	heads := headsFile(k1, records[9], records[19]) + headsFile(k2, records[29], records[39])

	anchors, err := VerifyHeads(strings.NewReader(heads), keyring(t, k1, k2))
	if err != nil {
		t.Fatal(err)
	}
	if len(anchors) != 4 || anchors[3] != records[39].Head() {
		t.Fatalf("anchors %v", anchors)
	}
	expectProblem(t, records, anchors, ProblemNone, 0)

	_, err = VerifyHeads(strings.NewReader(heads), keyring(t, k2))
	var he *HeadError
	if !errors.As(err, &he) || he.Line != 1 || he.Seq != 10 || !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("only key 2 listed: %v, want an unknown key at line 1, seq 10", err)
	}
	if !strings.Contains(err.Error(), KeyID(pub(k1))) {
		t.Fatalf("the error %q does not name the missing key", err)
	}
	// Key 2's own heads still verify alone.
	if _, err := VerifyHeads(strings.NewReader(headsFile(k2, records[29], records[39])), keyring(t, k2)); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyHeadsRefusesForgedAndConflictingHeads(t *testing.T) {
	t.Parallel()
	key := testKey(1)
	records := chain(t, 3)
	ring := keyring(t, key)

	forged := headsFile(key, records[0]) + strings.Replace(headsFile(key, records[1]), `"seq":2`, `"seq":3`, 1)
	_, err := VerifyHeads(strings.NewReader(forged), ring)
	var he *HeadError
	if !errors.As(err, &he) || he.Line != 2 || he.Seq != 3 || !errors.Is(err, ErrBadSignature) {
		t.Fatalf("forged: %v", err)
	}

	other := records[1]
	other.Hash[0] ^= 1
	_, err = VerifyHeads(strings.NewReader(headsFile(key, records[1], other)), ring)
	if !errors.As(err, &he) || he.Line != 2 || he.Seq != 2 {
		t.Fatalf("two hashes for one seq: %v", err)
	}

	_, err = VerifyHeads(strings.NewReader(headsFile(key, records[0])+"{\n"), ring)
	if !errors.As(err, &he) || he.Line != 2 || !errors.Is(err, ErrBadHead) {
		t.Fatalf("malformed: %v", err)
	}
}

func FuzzParseSignedHead(f *testing.F) {
	f.Add([]byte(SignHead(testKey(1), Head{Seq: 1, Hash: Hash{1}}, time.Unix(0, 0)).AppendJSON(nil)))
	f.Add([]byte(`{"v":1}`))
	ring := Keyring{KeyID(pub(testKey(1))): pub(testKey(1))}
	f.Fuzz(func(t *testing.T, line []byte) {
		s, err := ParseSignedHead(line)
		if err != nil {
			return
		}
		_ = ring.Verify(s) // must not panic
		back, err := ParseSignedHead(s.AppendJSON(nil))
		if err != nil {
			t.Fatalf("a parsed head does not parse back: %v", err)
		}
		if !bytes.Equal(back.Message(), s.Message()) || back.KeyID != s.KeyID || !bytes.Equal(back.Sig, s.Sig) {
			t.Fatalf("round trip changed the head: %+v != %+v", back, s)
		}
	})
}
