package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands/auditseq"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/infra/auditarchive"
	"github.com/cairnhq/cairn/infra/maintenance"
	"github.com/cairnhq/cairn/infra/pgtest"
)

// backends are the event stores the archive is tested on.
var backends = []struct {
	name string
	open func(t *testing.T) eventstore.Store
}{
	{"sqlite", func(t *testing.T) eventstore.Store { return openTrail(t) }},
	{"postgres", func(t *testing.T) eventstore.Store {
		url, schema := pgtest.Schema(t)
		s, err := postgres.Open(context.Background(), url, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}},
}

// growTrail logs n more access records (one event each) and seals them
// with the real sequencer, one record per audit.sealed event, until the
// chain holds total records.
func growTrail(t *testing.T, store eventstore.Store, n, total int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		data, _ := json.Marshal(domain.AccessLogged{Record: trailRecord(total - n + i)})
		if _, err := store.Append(ctx, domain.AccessLogStream, eventstore.Any,
			eventstore.EventData{ID: eventstore.NewEventID(), Type: domain.TypeAccessLogged, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	sealed := make(chan audit.Head, 64)
	seq, err := auditseq.New(auditseq.Config{Batch: 1, Logger: slog.New(slog.DiscardHandler), OnSealed: func(h audit.Head) { sealed <- h }}, store)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- seq.Run(ctx) }()
	timeout := time.After(30 * time.Second)
	for h := (audit.Head{}); h.Seq < uint64(total); {
		select {
		case h = <-sealed:
		case <-timeout:
			t.Fatalf("sealed %d of %d", h.Seq, total)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// verifyArchived runs cairn replay audit --verify over the archives and
// the live store, with their signed heads.
func verifyArchived(store eventstore.Store, keys string, dirs ...string) (audit.Head, error) {
	return replayAudit(context.Background(), store, auditReplayOptions{verify: true, quiet: true, page: 4, archives: dirs, headKeys: keys}, &bytes.Buffer{})
}

func expectChainError(t *testing.T, err error, p audit.Problem, seq uint64) {
	t.Helper()
	var ce *audit.ChainError
	if !errors.As(err, &ce) || ce.Problem != p || ce.Seq != seq {
		t.Fatalf("err %v, want %s at seq %d", err, p, seq)
	}
}

// copyDir copies an archive's files to a new directory, leaving out skip.
func copyDir(t *testing.T, dir string, skip ...string) string {
	t.Helper()
	out := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(strings.Join(skip, " "), e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestAuditArchiveAndPrune, on SQLite and PostgreSQL: the oldest records
// archived and pruned, the trail (archive + live) still verifies as one
// chain, and the sequencer goes on; a missing archive file is a gap
// (removed) at the seq after it, a changed one altered.
func TestAuditArchiveAndPrune(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			store := b.open(t)
			ctx := context.Background()
			growTrail(t, store, 10, 10)
			key, line := headKey(t)
			keys := writeFile(t, "keys.txt", line+"\n")
			dir := filepath.Join(t.TempDir(), "archive")

			res, err := auditarchive.Archive(ctx, store, auditarchive.Options{Through: 6, Dir: dir, Key: key, Prune: true, FileRecords: 2})
			if err != nil {
				t.Fatal(err)
			}
			recs := records6(t, dir)
			if res.Start != audit.Genesis || res.Through != recs[5].Head() || res.Records != 6 || res.Pruned != 6 || len(res.Files) != 3 ||
				filepath.Base(res.Files[1]) != "audit-000000000003-000000000004.ndjson" {
				t.Fatalf("result %+v", res)
			}
			// The live store starts after the archive: its events 0-5 are tombstones.
			if start, err := maintenance.AuditStart(ctx, store); err != nil || start != res.Through {
				t.Fatalf("live start %v, %v", start, err)
			}
			if head, _, err := maintenance.VerifyAudit(ctx, store, nil); err != nil || head.Seq != 10 {
				t.Fatalf("the live trail alone: %v, %v", head, err)
			}
			if head, err := verifyArchived(store, keys, dir); err != nil || head.Seq != 10 {
				t.Fatalf("archive + live: %v, %v", head, err)
			}
			// The sequencer chains on from the live head.
			growTrail(t, store, 2, 12)
			if head, err := verifyArchived(store, keys, dir); err != nil || head.Seq != 12 {
				t.Fatalf("archive + live after more records: %v, %v", head, err)
			}
			// A second archive continues the first.
			dir2 := filepath.Join(t.TempDir(), "archive2")
			res2, err := auditarchive.Archive(ctx, store, auditarchive.Options{Through: 9, Dir: dir2, Key: key, Prune: true})
			if err != nil || res2.Start != res.Through || res2.Through.Seq != 9 {
				t.Fatalf("second archive: %+v, %v", res2, err)
			}
			if head, err := verifyArchived(store, keys, dir, dir2); err != nil || head.Seq != 12 {
				t.Fatalf("two archives + live: %v, %v", head, err)
			}

			// A missing file: a gap at the seq after it.
			_, err = verifyArchived(store, keys, copyDir(t, dir, "audit-000000000003-000000000004.ndjson"), dir2)
			expectChainError(t, err, audit.ProblemRemoved, 5)
			_, err = verifyArchived(store, "", copyDir(t, dir, "audit-000000000005-000000000006.ndjson"), dir2)
			expectChainError(t, err, audit.ProblemRemoved, 7)
			_, err = verifyArchived(store, keys, dir) // the second archive left out
			expectChainError(t, err, audit.ProblemRemoved, 10)
			// A record changed in an archive file.
			changed := copyDir(t, dir)
			name := filepath.Join(changed, "audit-000000000003-000000000004.ndjson")
			data, _ := os.ReadFile(name)
			os.WriteFile(name, bytes.Replace(data, []byte(`"user_id":"bob"`), []byte(`"user_id":"eve"`), 1), 0o600)
			_, err = verifyArchived(store, keys, changed, dir2)
			expectChainError(t, err, audit.ProblemAltered, 4)
		})
	}
}

// records6 reads an archive's records.
func records6(t *testing.T, dir string) []auditarchive.Record {
	t.Helper()
	var out []auditarchive.Record
	for r, err := range auditarchive.Records(dir) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestAuditArchiveRefusals: nothing is archived or pruned when the live
// trail does not verify, when there is nothing whole to archive, or when
// the directory holds an archive; the last run always stays live.
func TestAuditArchiveRefusals(t *testing.T) {
	ctx := context.Background()
	key, _ := headKey(t)
	tombstones := func(store eventstore.Store) int {
		evs, err := store.ReadStream(ctx, domain.AuditStream, eventstore.ReadStreamOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ev := range evs {
			if ev.Type == domain.TypeAuditPruned {
				n++
			}
		}
		return n
	}

	store := sealedTrail(t, 5)
	// Through past the end: everything but the last run.
	res, err := auditarchive.Archive(ctx, store, auditarchive.Options{Through: 100, Dir: filepath.Join(t.TempDir(), "a"), Key: key, Prune: true})
	if err != nil || res.Through.Seq != 4 || tombstones(store) != 4 {
		t.Fatalf("through past the end: %+v, %v", res, err)
	}
	for name, o := range map[string]auditarchive.Options{
		"nothing whole before": {Through: 4, Dir: filepath.Join(t.TempDir(), "b"), Key: key, Prune: true},
		"no key":               {Through: 4, Dir: filepath.Join(t.TempDir(), "c"), Prune: true},
		"no seq":               {Dir: filepath.Join(t.TempDir(), "d"), Key: key, Prune: true},
	} {
		if _, err := auditarchive.Archive(ctx, store, o); err == nil {
			t.Errorf("%s: archived", name)
		}
	}

	store = sealedTrail(t, 6)
	tamper(t, store, `UPDATE events SET data = CAST(replace(CAST(data AS TEXT), '"status":200', '"status":201') AS BLOB) WHERE stream = 'audit' AND revision = 4`)
	_, err = auditarchive.Archive(ctx, store, auditarchive.Options{Through: 3, Dir: filepath.Join(t.TempDir(), "e"), Key: key, Prune: true})
	if domain.KindOf(err) != domain.KindConflict || !strings.Contains(err.Error(), "altered at record seq 5") || tombstones(store) != 0 {
		t.Fatalf("a broken live trail after the range: %v (%d tombstones)", err, tombstones(store))
	}

	store = sealedTrail(t, 4)
	dir := t.TempDir()
	if _, err := auditarchive.Archive(ctx, store, auditarchive.Options{Through: 2, Dir: dir, Key: key}); err != nil {
		t.Fatal(err)
	}
	if tombstones(store) != 0 {
		t.Fatal("pruned without Prune")
	}
	_, err = auditarchive.Archive(ctx, store, auditarchive.Options{Through: 2, Dir: dir, Key: key, Prune: true})
	if domain.KindOf(err) != domain.KindConflict || !errors.Is(err, auditarchive.ErrNotEmpty) || tombstones(store) != 0 {
		t.Fatalf("a directory holding an archive: %v", err)
	}
}
