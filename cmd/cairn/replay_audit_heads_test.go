package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/auditheads"
)

// records reads the sealed records of the audit stream, one per event in a
// trail made by sealedTrail.
func records(t *testing.T, store *sqlite.Store) []domain.SealedRecord {
	t.Helper()
	evs, err := store.ReadStream(context.Background(), domain.AuditStream, eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []domain.SealedRecord
	for _, ev := range evs {
		d, err := domain.DecodeEvent(ev.Type, ev.Version, ev.Data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.(domain.AuditSealed).Records...)
	}
	return out
}

// headKey makes a key with cairn audit keygen and returns it with its
// public key line.
func headKey(t *testing.T) (ed25519.PrivateKey, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "head.key")
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"audit", "keygen", "--out", path})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	key, err := auditheads.LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(out.String())
	if line != audit.PublicKeyLine(key.Public().(ed25519.PublicKey)) {
		t.Fatalf("keygen printed %q", line)
	}
	// pubkey prints it again.
	root = newRootCommand()
	out.Reset()
	root.SetOut(&out)
	root.SetArgs([]string{"audit", "pubkey", "--key", path})
	if err := root.Execute(); err != nil || strings.TrimSpace(out.String()) != line {
		t.Fatalf("pubkey printed %q, %v", out.String(), err)
	}
	return key, line
}

// writeFile writes content to a new file in dir and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// signHeads signs the heads of recs at the given seqs with key, as NDJSON.
func signHeads(key ed25519.PrivateKey, recs []domain.SealedRecord, seqs ...uint64) string {
	var b []byte
	for _, seq := range seqs {
		b = audit.SignHead(key, recs[seq-1].Head(), time.Unix(1_800_000_000+int64(seq), 42)).AppendJSON(b)
		b = append(b, '\n')
	}
	return string(b)
}

func verifyWithHeads(store *sqlite.Store, heads []string, keys string) error {
	_, err := replayAudit(context.Background(), store, auditReplayOptions{verify: true, quiet: true, page: 4, heads: heads, headKeys: keys}, &bytes.Buffer{})
	return err
}

// TestReplayAuditAgainstSignedHeads: the two tamperings the chain alone
// cannot show, caught against heads signed by a key outside the store.
func TestReplayAuditAgainstSignedHeads(t *testing.T) {
	key, pubLine := headKey(t)
	keys := writeFile(t, "keys.txt", "# the audit head keys\n"+pubLine+"\n")

	t.Run("intact", func(t *testing.T) {
		store := sealedTrail(t, 12)
		heads := writeFile(t, "heads.ndjson", signHeads(key, records(t, store), 4, 8, 12))
		if err := verifyWithHeads(store, []string{heads}, keys); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		store := sealedTrail(t, 12)
		heads := writeFile(t, "heads.ndjson", signHeads(key, records(t, store), 4, 8, 12))
		// The last 3 records removed: the chain alone is consistent.
		tamper(t, store, `DELETE FROM events WHERE stream = 'audit' AND revision = 11`)
		tamper(t, store, `DELETE FROM events WHERE stream = 'audit' AND revision = 10`)
		tamper(t, store, `DELETE FROM events WHERE stream = 'audit' AND revision = 9`)
		if _, err := replayAudit(context.Background(), store, auditReplayOptions{verify: true, quiet: true, page: 4}, &bytes.Buffer{}); err != nil {
			t.Fatalf("without heads: %v", err)
		}
		err := verifyWithHeads(store, []string{heads}, keys)
		var ce *audit.ChainError
		if !errors.As(err, &ce) || ce.Problem != audit.ProblemTruncated || ce.Seq != 12 {
			t.Fatalf("err %v, want truncated before seq 12", err)
		}
	})
	t.Run("re-hashed suffix", func(t *testing.T) {
		store := sealedTrail(t, 12)
		recs := records(t, store)
		heads := writeFile(t, "heads.ndjson", signHeads(key, recs, 4, 8, 12))
		// Record 6 rewritten, every record after it re-hashed and stored.
		plain := make([]audit.Record, 0, 7)
		for _, r := range recs[5:] {
			plain = append(plain, r.Record)
		}
		plain[0].UserID = "mallory"
		resealed, _, err := audit.SealAll(recs[4].Head(), plain)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range resealed {
			data := domain.AppendSealedJSON([]byte(`{"records":[`), &domain.SealedRecord{Record: r, SourcePosition: recs[5+i].SourcePosition})
			tamper(t, store, `UPDATE events SET data = ? WHERE stream = 'audit' AND revision = ?`, append(data, "]}"...), 5+i)
		}
		if _, err := replayAudit(context.Background(), store, auditReplayOptions{verify: true, quiet: true, page: 4}, &bytes.Buffer{}); err != nil {
			t.Fatalf("without heads: %v", err)
		}
		err = verifyWithHeads(store, []string{heads}, keys)
		var ce *audit.ChainError
		if !errors.As(err, &ce) || ce.Problem != audit.ProblemAltered || ce.Seq != 8 {
			t.Fatalf("err %v, want altered at seq 8, the first head after the change", err)
		}
	})
	t.Run("head by an unknown key", func(t *testing.T) {
		store := sealedTrail(t, 4)
		other, _ := headKey(t)
		heads := writeFile(t, "heads.ndjson", signHeads(key, records(t, store), 2)+signHeads(other, records(t, store), 4))
		err := verifyWithHeads(store, []string{heads}, keys)
		var he *audit.HeadError
		if !errors.As(err, &he) || !errors.Is(err, audit.ErrUnknownKey) || he.Line != 2 || he.Seq != 4 || !strings.Contains(err.Error(), heads) {
			t.Fatalf("err %v, want an unknown key at line 2 (seq 4) of %s", err, heads)
		}
	})
}

// TestReplayAuditKeyRotation: heads signed by key 1, then by key 2 after
// a rotation. The keys file lists both: they verify; it lists key 2 only:
// key 1's heads are refused, with a message naming the key.
func TestReplayAuditKeyRotation(t *testing.T) {
	k1, line1 := headKey(t)
	k2, line2 := headKey(t)
	store := sealedTrail(t, 8)
	recs := records(t, store)
	heads := writeFile(t, "heads.ndjson", signHeads(k1, recs, 2, 4)+signHeads(k2, recs, 6, 8))
	if err := verifyWithHeads(store, []string{heads}, writeFile(t, "keys.txt", line1+"\n"+line2+"\n")); err != nil {
		t.Fatalf("both keys listed: %v", err)
	}
	err := verifyWithHeads(store, []string{heads}, writeFile(t, "keys.txt", line2+"\n"))
	var he *audit.HeadError
	if !errors.As(err, &he) || !errors.Is(err, audit.ErrUnknownKey) || he.Line != 1 || he.Seq != 2 ||
		!strings.Contains(err.Error(), audit.KeyID(k1.Public().(ed25519.PublicKey))) {
		t.Fatalf("only key 2 listed: %v, want key 1's first head refused, naming key 1", err)
	}
}

func TestReplayAuditHeadsFlags(t *testing.T) {
	store := sealedTrail(t, 1)
	_, line := headKey(t)
	keys := writeFile(t, "keys.txt", line+"\n")
	heads := writeFile(t, "heads.ndjson", "")
	for _, o := range []auditReplayOptions{
		{heads: []string{heads}, headKeys: keys, page: 1},                         // no --verify
		{verify: true, heads: []string{heads}, page: 1},                           // no keys
		{verify: true, headKeys: keys, page: 1},                                   // keys, nothing to verify
		{verify: true, heads: []string{heads}, headKeys: heads, page: 1},          // an empty keys file
		{verify: true, heads: []string{"/nonexistent"}, headKeys: keys, page: 1},  // no heads file
		{verify: true, heads: []string{heads}, headKeys: "/nonexistent", page: 1}, // no keys file
	} {
		if _, err := replayAudit(context.Background(), store, o, &bytes.Buffer{}); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if err := verifyWithHeads(store, []string{heads}, keys); err != nil {
		t.Fatalf("an empty heads file: %v", err)
	}
}
