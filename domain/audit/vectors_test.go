package audit

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
)

// The published test vectors of the audit chain (docs/audit.md): records
// with their v1 encoding and hash, signed heads with their message, and
// whole exports with the verdict every verifier must reach. They are made
// by the code below from the Go implementation; TestVectors fails when the
// committed file differs from what the code makes now, so the spec cannot
// drift from the code. Regenerate with: go test ./domain/audit -run
// TestVectors -update (and review the diff: a changed hash breaks every
// verifier in the field).
const vectorsPath = "../../docs/audit-vectors/vectors.json"

var updateVectors = flag.Bool("update", false, "rewrite "+vectorsPath+" from the code")

// vectorFile is the layout of vectors.json.
type vectorFile struct {
	About   []string       `json:"about"`
	Records []recordVector `json:"records"`
	Keys    []keyVector    `json:"keys"`
	Heads   []headVector   `json:"heads"`
	Chains  []chainVector  `json:"chains"`
}

type recordVector struct {
	Name     string `json:"name"`
	JSON     string `json:"json"`         // the record exactly as stored and exported
	Encoding string `json:"encoding_hex"` // its v1 canonical encoding
	Hash     string `json:"hash"`         // SHA-256 of the encoding
}

type keyVector struct {
	Name          string `json:"name"`
	TestOnlySeed  string `json:"test_only_seed"` // base64 of the 32-byte seed: PUBLIC, never use it
	PrivateFile   string `json:"private_key_file"`
	PublicKeyLine string `json:"public_key_line"`
	KeyID         string `json:"key_id"`
}

type headVector struct {
	Name    string `json:"name"`
	Key     string `json:"key"`
	Head    string `json:"head"` // the NDJSON line
	Message string `json:"message_hex"`
}

type chainVector struct {
	Name    string    `json:"name"`
	Export  []string  `json:"export"`
	Heads   []string  `json:"heads,omitempty"`
	Keys    []string  `json:"keys,omitempty"` // lines of a public keys file
	Anchors []string  `json:"anchors,omitempty"`
	Want    chainWant `json:"want"`
}

// chainWant is a verifier's verdict: Problem "none" with the verified
// head's Seq, a chain problem with the first bad Seq, "bad-head" with
// the 1-based line of the first head refused, or "malformed" with the
// 1-based Line of the first export line that is no record.
type chainWant struct {
	Problem  string `json:"problem"`
	Seq      uint64 `json:"seq,omitempty"`
	HeadLine int    `json:"head_line,omitempty"`
	Line     int    `json:"line,omitempty"`
}

const vectorHeadTag = "cairn.audit.head.v1\x00"

// vectorSignedHead is the NDJSON line of a signed head (the format the head
// signer publishes).
type vectorSignedHead struct {
	V     int    `json:"v"`
	Seq   uint64 `json:"seq"`
	Hash  string `json:"hash"`
	Time  string `json:"time"`
	KeyID string `json:"key_id"`
	Sig   string `json:"sig"`
}

// vectorHeadMessage is the byte string a head's signature covers.
func vectorHeadMessage(seq uint64, h Hash, at time.Time) []byte {
	b := append([]byte(vectorHeadTag), make([]byte, 0, 52)...)
	b = binary.BigEndian.AppendUint64(b, seq)
	b = append(b, h[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(at.Unix()))
	return binary.BigEndian.AppendUint32(b, uint32(at.Nanosecond()))
}

func keyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// vectorKey is a key of the vectors: its seed is published, so it is good
// for tests and nothing else.
func vectorKey(n int) ed25519.PrivateKey {
	seed := sha256.Sum256(fmt.Appendf(nil, "cairn audit head TEST-ONLY key %d: this seed is public", n))
	return ed25519.NewKeyFromSeed(seed[:])
}

func publicKeyLine(k ed25519.PrivateKey, comment string) string {
	return "ed25519 " + base64.StdEncoding.EncodeToString(k.Public().(ed25519.PublicKey)) + " " + comment
}

func vectorSignHead(k ed25519.PrivateKey, seq uint64, h Hash, at time.Time) string {
	line, _ := json.Marshal(vectorSignedHead{V: 1, Seq: seq, Hash: h.String(), Time: at.UTC().Format(time.RFC3339Nano),
		KeyID: keyID(k.Public().(ed25519.PublicKey)), Sig: base64.StdEncoding.EncodeToString(ed25519.Sign(k, vectorHeadMessage(seq, h, at)))})
	return string(line)
}

// vectorRecords are the records of the vectors, chained from genesis:
// every field, empty strings, non-ASCII and invalid UTF-8, JSON escapes,
// zero and negative numbers, times before 1970 and with nanoseconds.
func vectorRecords() ([]string, []Record) {
	names := []string{
		"1: the fewest fields (optional strings empty, status and duration zero, the Unix epoch)",
		"2: every field set, ASCII, a time with nanoseconds",
		"3: non-ASCII UTF-8 (2-, 3- and 4-byte characters) and a fraction JSON writes without trailing zeros",
		"4: negative numbers and a time before 1970 (Seal refuses a negative status or duration; verifiers still encode them)",
		"5: invalid UTF-8 stored as U+FFFD, characters JSON escapes (< > & \" \\ control, U+2028)",
	}
	raw := []Record{
		{Time: time.Unix(0, 0), Action: "GET /v1/sessions", Outcome: Success},
		{Time: time.Date(2026, 11, 27, 14, 15, 16, 123456789, time.UTC), UserID: "0195a0c0-0000-7000-8000-0000000000a1",
			AccessKey: "AKIAEXAMPLE0000000001", ActingAs: "AKIAOWNER00000000002", Action: "POST /v1/sessions",
			EntityType: "session", EntityID: "0195a0c1-1111-7111-8111-111111111111", ClientIP: "192.0.2.7",
			Outcome: Success, Status: 201, Duration: 1234567, RequestID: "req-42"},
		{Time: time.Date(2026, 11, 27, 23, 0, 0, 100000000, time.FixedZone("", 9*3600)), UserID: "naïve 東京 🙂",
			Action: "DELETE /v1/folders/:id", EntityType: "folder", EntityID: "données", ClientIP: "2001:db8::1",
			Outcome: Denied, Status: 403, Duration: 999},
		{Time: time.Date(1969, 7, 20, 20, 17, 40, 1, time.UTC), Action: "session.create", Outcome: Failure, Status: -1, Duration: -5},
		{Time: time.Date(2026, 11, 27, 14, 15, 17, 0, time.UTC), AccessKey: "bad\xffkey", Action: "GET /v1/x?a=<b>&c=\"d\\e\"",
			EntityID: "tab\tnew\nline\x01", RequestID: "line\u2028sep", Outcome: Denied, Status: 401},
	}
	var out []Record
	prev := Genesis
	for _, r := range raw {
		r = r.normalize()
		r.Version, r.Seq, r.PrevHash = CurrentVersion, prev.Seq+1, prev.Hash
		r.Hash = hashV1(&r)
		out, prev = append(out, r), r.Head()
	}
	return names, out
}

func lines(rs []Record) []string {
	out := make([]string, len(rs))
	for i := range rs {
		out[i] = string(AppendJSON(nil, &rs[i]))
	}
	return out
}

func elided(r Record) string {
	return fmt.Sprintf(`{"seq":%d,"prev_hash":"%s","hash":"%s","elided":true}`, r.Seq, r.PrevHash, r.Hash)
}

// rehash re-seals rs from index i on: the chain is consistent again.
func rehash(rs []Record, i int) []Record {
	rs = slices.Clone(rs)
	for ; i < len(rs); i++ {
		if i > 0 {
			rs[i].PrevHash = rs[i-1].Hash
		}
		rs[i].Hash = hashV1(&rs[i])
	}
	return rs
}

func makeVectors() vectorFile {
	names, rs := vectorRecords()
	k1, k2 := vectorKey(1), vectorKey(2)
	t1 := time.Date(2026, 11, 27, 14, 15, 18, 987654321, time.UTC)
	t2 := time.Date(2026, 11, 27, 14, 16, 0, 0, time.UTC)
	head3, head5 := vectorSignHead(k1, 3, rs[2].Hash, t1), vectorSignHead(k2, 5, rs[4].Hash, t2)
	both := []string{publicKeyLine(k1, "test-only key 1 (old)"), publicKeyLine(k2, "test-only key 2 (new)")}
	f := vectorFile{About: []string{
		"Test vectors of Cairn's audit chain (docs/audit.md). Made from the Go code by domain/audit's TestVectors, which fails if they drift.",
		"records: each record's JSON as stored and exported, its v1 canonical encoding (hex) and hash. They form one chain from genesis (seq 1 to 5).",
		"keys: TEST-ONLY ed25519 keys whose seeds are published here: never sign real heads with them.",
		"heads: signed heads (NDJSON lines) over records 3 and 5, and the message each signature covers (hex).",
		"chains: exports (NDJSON lines) with heads, public keys and anchors, and the verdict every verifier must reach:",
		"  problem none (seq = the verified head), a chain problem with the first bad seq, bad-head with the 1-based line of the first refused head,",
		"  or malformed with the 1-based line of the first export line that is no record.",
	}}
	all := lines(rs)
	for i, r := range rs {
		f.Records = append(f.Records, recordVector{Name: names[i], JSON: all[i], Encoding: hex.EncodeToString(appendV1(nil, &r)), Hash: r.Hash.String()})
	}
	for i, k := range []ed25519.PrivateKey{k1, k2} {
		seed := base64.StdEncoding.EncodeToString(k.Seed())
		f.Keys = append(f.Keys, keyVector{Name: fmt.Sprintf("test-only key %d", i+1), TestOnlySeed: seed,
			PrivateFile: "ed25519-private " + seed, PublicKeyLine: publicKeyLine(k, fmt.Sprintf("test-only key %d", i+1)),
			KeyID: keyID(k.Public().(ed25519.PublicKey))})
	}
	f.Heads = []headVector{
		{Name: "head of record 3, key 1, a time with nanoseconds", Key: "test-only key 1", Head: head3, Message: hex.EncodeToString(vectorHeadMessage(3, rs[2].Hash, t1))},
		{Name: "head of record 5, key 2, a whole-second time", Key: "test-only key 2", Head: head5, Message: hex.EncodeToString(vectorHeadMessage(5, rs[4].Hash, t2))},
	}

	altered := slices.Clone(rs)
	altered[1].Status = 200
	rewritten := slices.Clone(rs)
	rewritten[2].UserID = "mallory"
	rewritten = rehash(rewritten, 2)
	var v2 = slices.Clone(rs)
	v2[0].Version = 2
	var sh vectorSignedHead
	json.Unmarshal([]byte(head5), &sh)
	sig, _ := base64.StdEncoding.DecodeString(sh.Sig)
	flipped := slices.Clone(sig)
	flipped[0] ^= 1
	sh.Sig = base64.StdEncoding.EncodeToString(flipped)
	badSig, _ := json.Marshal(sh)
	sh.Sig = base64.StdEncoding.EncodeToString(nonCanonicalS(sig))
	highS, _ := json.Marshal(sh)
	moved := []string{all[0], all[2], all[1], all[3], all[4]}

	f.Chains = []chainVector{
		{Name: "intact", Export: all, Want: chainWant{Problem: "none", Seq: 5}},
		{Name: "intact, with heads signed by the old and the new key", Export: all, Heads: []string{head3, head5}, Keys: both, Want: chainWant{Problem: "none", Seq: 5}},
		{Name: "intact, with an anchor", Export: all, Anchors: []string{"5:" + rs[4].Hash.String()}, Want: chainWant{Problem: "none", Seq: 5}},
		{Name: "empty export", Export: []string{}, Want: chainWant{Problem: "none", Seq: 0}},
		{Name: "a field changed (record 2's status)", Export: lines(altered), Want: chainWant{Problem: "altered", Seq: 2}},
		{Name: "a record removed (3)", Export: slices.Delete(slices.Clone(all), 2, 3), Want: chainWant{Problem: "removed", Seq: 4}},
		{Name: "two records swapped (2 and 3)", Export: moved, Want: chainWant{Problem: "reordered", Seq: 3}},
		{Name: "a record repeated (2)", Export: slices.Insert(slices.Clone(all), 2, all[1]), Want: chainWant{Problem: "duplicated", Seq: 2}},
		{Name: "the tail truncated (5) against a head", Export: all[:4], Heads: []string{head3, head5}, Keys: both, Want: chainWant{Problem: "truncated", Seq: 5}},
		{Name: "the tail truncated, no head: undetectable", Export: all[:4], Want: chainWant{Problem: "none", Seq: 4}},
		{Name: "record 3 rewritten and every later record re-hashed, against heads", Export: lines(rewritten), Heads: []string{head3, head5}, Keys: both, Want: chainWant{Problem: "altered", Seq: 3}},
		{Name: "record 3 rewritten and re-hashed, against the head of 5 only", Export: lines(rewritten), Heads: []string{head5}, Keys: both, Want: chainWant{Problem: "altered", Seq: 5}},
		{Name: "record 3 rewritten and re-hashed, no head: undetectable", Export: lines(rewritten), Want: chainWant{Problem: "none", Seq: 5}},
		{Name: "an unknown encoding version", Export: append(lines(v2[:1]), all[1:]...), Want: chainWant{Problem: "unsupported-version", Seq: 1}},
		{Name: "the old key's head refused once its key left the keys file", Export: all, Heads: []string{head3, head5}, Keys: both[1:], Want: chainWant{Problem: "bad-head", HeadLine: 1}},
		{Name: "a head whose signature was changed", Export: all, Heads: []string{head3, string(badSig)}, Keys: both, Want: chainWant{Problem: "bad-head", HeadLine: 2}},
		{Name: "a head whose signature has S + L (non-canonical)", Export: all, Heads: []string{string(highS)}, Keys: both, Want: chainWant{Problem: "bad-head", HeadLine: 1}},
		{Name: "elided records (2 and 4) keep the chain", Export: []string{all[0], elided(rs[1]), all[2], elided(rs[3]), all[4]}, Heads: []string{head5}, Keys: both, Want: chainWant{Problem: "none", Seq: 5}},
		{Name: "elided records first and last", Export: []string{elided(rs[0]), all[1], all[2], all[3], elided(rs[4])}, Heads: []string{head5}, Keys: both, Want: chainWant{Problem: "none", Seq: 5}},
		{Name: "an elided record whose prev_hash does not link", Export: []string{all[0], strings.Replace(elided(rs[1]), rs[0].Hash.String(), rs[2].Hash.String(), 1), all[2], all[3], all[4]}, Want: chainWant{Problem: "altered", Seq: 2}},
		{Name: "an elided record whose hash is not the next prev_hash", Export: []string{all[0], strings.Replace(elided(rs[1]), rs[1].Hash.String(), rs[3].Hash.String(), 1), all[2], all[3], all[4]}, Want: chainWant{Problem: "altered", Seq: 3}},
		{Name: "an elided record with another member", Export: []string{all[0], strings.Replace(elided(rs[1]), `{`, `{"status":200,`, 1), all[2]}, Want: chainWant{Problem: "malformed", Line: 2}},
		{Name: "a null elided is a full record's (here one without its fields)", Export: []string{all[0], strings.Replace(elided(rs[1]), `true`, `null`, 1), all[2]}, Want: chainWant{Problem: "unsupported-version", Seq: 2}},
		{Name: "a head with a member of its own", Export: all, Heads: []string{strings.Replace(head5, `{`, `{"note":"x",`, 1)}, Keys: both, Want: chainWant{Problem: "bad-head", HeadLine: 1}},
		{Name: "a head whose hash is in upper case", Export: all, Heads: []string{head3, strings.Replace(head5, rs[4].Hash.String(), strings.ToUpper(rs[4].Hash.String()), 1)}, Keys: both, Want: chainWant{Problem: "bad-head", HeadLine: 2}},
		{Name: "two valid heads naming different hashes for one seq", Export: all, Heads: []string{head5, vectorSignHead(k2, 5, rs[3].Hash, t2)}, Keys: both, Want: chainWant{Problem: "bad-head", HeadLine: 2}},
		{Name: "a gap around elided records", Export: []string{all[0], elided(rs[1]), elided(rs[3]), all[4]}, Want: chainWant{Problem: "removed", Seq: 4}},
	}
	return f
}

// nonCanonicalS adds the group order L to a signature's S (still 32
// bytes): the same point arithmetic, an encoding verifiers must refuse.
func nonCanonicalS(sig []byte) []byte {
	l, _ := new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)
	le := slices.Clone(sig[32:])
	slices.Reverse(le)
	s := new(big.Int).Add(new(big.Int).SetBytes(le), l)
	be := s.FillBytes(make([]byte, 32))
	slices.Reverse(be)
	return append(slices.Clone(sig[:32]), be...)
}

func encodeVectors(t *testing.T, f vectorFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestVectors: the committed vectors are what the code makes, and each
// one checks on its own: a record's JSON decodes to the record whose
// encoding and hash are given, a head's signature verifies, and each
// chain gets its verdict from Verify.
func TestVectors(t *testing.T) {
	want := encodeVectors(t, makeVectors())
	if *updateVectors {
		if err := os.WriteFile(vectorsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from what the code makes: the encoding or the vectors changed (regenerate with -update and review)", vectorsPath)
	}
	var f vectorFile
	if err := json.Unmarshal(got, &f); err != nil {
		t.Fatal(err)
	}
	var prev Hash
	for i, v := range f.Records {
		r := decodeRecord(t, v.JSON)
		if enc := hex.EncodeToString(appendV1(nil, &r)); enc != v.Encoding {
			t.Errorf("record %d: encoding\n got %s\nwant %s", i+1, enc, v.Encoding)
		}
		if sum := sha256.Sum256(appendV1(nil, &r)); hex.EncodeToString(sum[:]) != v.Hash || r.Hash.String() != v.Hash {
			t.Errorf("record %d: hash %x, stored %s, vector %s", i+1, sum, r.Hash, v.Hash)
		}
		if r.PrevHash != prev || r.Seq != uint64(i+1) {
			t.Errorf("record %d: seq %d prev_hash %s: the records are not one chain", i+1, r.Seq, r.PrevHash)
		}
		prev = r.Hash
	}
	keys := map[string]ed25519.PublicKey{}
	for _, k := range f.Keys {
		seed, err := base64.StdEncoding.DecodeString(k.TestOnlySeed)
		if err != nil {
			t.Fatal(err)
		}
		pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
		keys[keyID(pub)] = pub
		if keyID(pub) != k.KeyID || !strings.HasPrefix(k.PublicKeyLine, "ed25519 "+base64.StdEncoding.EncodeToString(pub)+" ") {
			t.Errorf("%s: key id or public key line does not match the seed", k.Name)
		}
	}
	for _, h := range f.Heads {
		msg, err := vectorCheckHead(h.Head, keys)
		if err != nil {
			t.Errorf("%s: %v", h.Name, err)
		}
		if hex.EncodeToString(msg) != h.Message {
			t.Errorf("%s: message %x, vector %s", h.Name, msg, h.Message)
		}
	}
	for _, c := range f.Chains {
		t.Run(c.Name, func(t *testing.T) {
			if got := verifyVector(t, c); got != c.Want {
				t.Errorf("verdict %+v, want %+v", got, c.Want)
			}
		})
	}
}

func decodeRecord(t *testing.T, line string) Record {
	t.Helper()
	var r Record
	if err := jsonv2.Unmarshal([]byte(line), &r, jsonOptions); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return r
}

// vectorCheckHead verifies a signed head line under keys (by key id) and
// returns the message its signature covers.
func vectorCheckHead(line string, keys map[string]ed25519.PublicKey) ([]byte, error) {
	var h vectorSignedHead
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, err
	}
	var hash Hash
	if err := hash.UnmarshalText([]byte(h.Hash)); err != nil || h.Hash != strings.ToLower(h.Hash) {
		return nil, fmt.Errorf("hash %q is not 64 lower-case hex digits", h.Hash)
	}
	at, err := time.Parse(time.RFC3339Nano, h.Time)
	if err != nil {
		return nil, err
	}
	msg := vectorHeadMessage(h.Seq, hash, at)
	sig, err := base64.StdEncoding.DecodeString(h.Sig)
	if err != nil {
		return msg, err
	}
	pub, ok := keys[h.KeyID]
	if !ok {
		return msg, fmt.Errorf("key %s is not in the keys file", h.KeyID)
	}
	if h.V != 1 || !ed25519.Verify(pub, msg, sig) {
		return msg, errors.New("the signature does not verify")
	}
	return msg, nil
}

// verifyVector is the Go verifier's verdict on a chain vector: heads
// checked against the keys (the first refused one is the verdict), then
// Verify with every head and anchor as an anchor.
func verifyVector(t *testing.T, c chainVector) chainWant {
	t.Helper()
	keys := map[string]ed25519.PublicKey{}
	for _, k := range c.Keys {
		b, err := base64.StdEncoding.DecodeString(strings.Fields(k)[1])
		if err != nil {
			t.Fatal(err)
		}
		keys[keyID(b)] = b
	}
	if len(c.Heads) > 0 {
		ring, err := ParseKeyring(strings.NewReader(strings.Join(c.Keys, "\n")))
		if err != nil {
			t.Fatal(err)
		}
		_, herr := VerifyHeads(strings.NewReader(strings.Join(c.Heads, "\n")), ring)
		var he *HeadError
		if errors.As(herr, &he) {
			if got := (chainWant{Problem: "bad-head", HeadLine: he.Line}); c.Want != got {
				t.Errorf("VerifyHeads: %v", herr)
			}
		} else if herr != nil {
			t.Fatal(herr)
		} else if c.Want.Problem == "bad-head" {
			t.Errorf("VerifyHeads accepted heads the vector refuses")
		}
	}
	var anchors []Head
	signed := map[uint64]Hash{}
	for i, line := range c.Heads {
		if _, err := vectorCheckHead(line, keys); err != nil {
			return chainWant{Problem: "bad-head", HeadLine: i + 1}
		}
		var h vectorSignedHead
		json.Unmarshal([]byte(line), &h)
		var hash Hash
		hash.UnmarshalText([]byte(h.Hash))
		if prev, ok := signed[h.Seq]; ok && prev != hash {
			return chainWant{Problem: "bad-head", HeadLine: i + 1} // the key signed two histories
		}
		signed[h.Seq] = hash
		anchors = append(anchors, Head{Seq: h.Seq, Hash: hash})
	}
	for _, a := range c.Anchors {
		seq, hash, _ := strings.Cut(a, ":")
		n, _ := strconv.ParseUint(seq, 10, 64)
		var h Hash
		if err := h.UnmarshalText([]byte(hash)); err != nil {
			t.Fatal(err)
		}
		anchors = append(anchors, Head{Seq: n, Hash: h})
	}
	var lines []Line
	for i, line := range c.Export {
		l, err := ParseLine([]byte(line))
		if err != nil {
			return chainWant{Problem: "malformed", Line: i + 1}
		}
		lines = append(lines, l)
	}
	v := NewVerifier(Genesis, anchors...)
	var err error
	for _, l := range lines {
		if err = v.AddLine(l); err != nil {
			break
		}
	}
	head := v.Head()
	if err == nil {
		head, err = v.Finish()
	}
	var ce *ChainError
	switch {
	case err == nil:
		return chainWant{Problem: "none", Seq: head.Seq}
	case errors.As(err, &ce):
		return chainWant{Problem: ce.Problem.String(), Seq: ce.Seq}
	}
	t.Fatal(err)
	return chainWant{}
}
