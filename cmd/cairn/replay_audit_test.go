package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands/auditseq"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/sqlite"
)

// sealedTrail writes n access records (alice and bob in turn), seals them
// with the real sequencer, one record per audit.sealed event (revision
// seq-1), and returns the store.
func sealedTrail(t *testing.T, n int) *sqlite.Store {
	t.Helper()
	store := openTrail(t)
	for i := range n {
		data, _ := json.Marshal(domain.AccessLogged{Record: trailRecord(i)})
		if _, err := store.Append(context.Background(), domain.AccessLogStream, eventstore.Any,
			eventstore.EventData{ID: eventstore.NewEventID(), Type: domain.TypeAccessLogged, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	sealAll(t, store, 1, n)
	return store
}

// sealedBatch writes n access records in one access-log batch, as the
// API's writer does for reads, and seals them in one event.
func sealedBatch(t *testing.T, n int) *sqlite.Store {
	t.Helper()
	store := openTrail(t)
	var batch domain.AccessBatchLogged
	for i := range n {
		batch.Records = append(batch.Records, trailRecord(i))
	}
	data, _ := json.Marshal(batch)
	if _, err := store.Append(context.Background(), domain.AccessLogStream, eventstore.Any,
		eventstore.EventData{ID: eventstore.NewEventID(), Type: domain.TypeAccessBatchLogged, Data: data}); err != nil {
		t.Fatal(err)
	}
	sealAll(t, store, 1, n)
	return store
}

func openTrail(t *testing.T) *sqlite.Store {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cairn.db"), sqlite.Options{Synchronous: "normal", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// trailRecord is the i-th record of a test trail: alice and bob in turn.
func trailRecord(i int) audit.Record {
	return audit.Record{Time: time.Unix(int64(1_800_000_000+i), 0), UserID: []string{"alice", "bob"}[i%2], Action: "GET /v1/sessions",
		Outcome: audit.Success, Status: 200, RequestID: fmt.Sprint("r", i)}
}

// sealAll runs the real sequencer (gathering batch records per append)
// until the chain holds n records.
func sealAll(t *testing.T, store *sqlite.Store, batch, n int) {
	t.Helper()
	sealed := make(chan audit.Head, 64)
	seq, err := auditseq.New(auditseq.Config{Batch: batch, Logger: slog.New(slog.DiscardHandler), OnSealed: func(h audit.Head) { sealed <- h }}, store)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- seq.Run(ctx) }()
	timeout := time.After(30 * time.Second)
	for h := (audit.Head{}); h.Seq < uint64(n); {
		select {
		case h = <-sealed:
		case <-timeout:
			t.Fatalf("sealed %d of %d", h.Seq, n)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// tamper runs a statement on the store's database file behind its back.
func tamper(t *testing.T, store *sqlite.Store, query string, args ...any) {
	t.Helper()
	db, err := sqlite.OpenRaw(store.Path(), sqlite.Options{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%s changed %d rows", query, n)
	}
}

func TestReplayAuditPrintsAndVerifies(t *testing.T) {
	store := sealedTrail(t, 7)
	var out bytes.Buffer
	head, err := replayAudit(context.Background(), store, auditReplayOptions{verify: true, actor: "bob", page: 3}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if head.Seq != 7 {
		t.Fatalf("head %+v, want seq 7", head)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"user_id":"bob"`) {
		t.Fatalf("bob's records:\n%s", out.String())
	}
	// The head verifies as an anchor.
	anchor := fmt.Sprintf("%d:%s", head.Seq, head.Hash)
	if _, err := replayAudit(context.Background(), store, auditReplayOptions{verify: true, quiet: true, anchors: []string{anchor}, page: 100}, &out); err != nil {
		t.Fatal(err)
	}
}

func TestReplayAuditDetectsTampering(t *testing.T) {
	for name, c := range map[string]struct {
		query  string
		anchor bool
		want   error
	}{
		"altered":   {query: `UPDATE events SET data = CAST(replace(CAST(data AS TEXT), '"status":200', '"status":201') AS BLOB) WHERE stream = 'audit' AND revision = 2`, want: audit.ErrAltered},
		"removed":   {query: `DELETE FROM events WHERE stream = 'audit' AND revision = 3`, want: audit.ErrRemoved},
		"truncated": {query: `DELETE FROM events WHERE stream = 'audit' AND revision = 5`, anchor: true, want: audit.ErrTruncated},
	} {
		t.Run(name, func(t *testing.T) {
			store := sealedTrail(t, 6)
			var out bytes.Buffer
			head, err := replayAudit(context.Background(), store, auditReplayOptions{verify: true, quiet: true, page: 4}, &out)
			if err != nil {
				t.Fatal(err)
			}
			tamper(t, store, c.query)
			o := auditReplayOptions{verify: true, quiet: true, page: 4}
			if c.anchor {
				o.anchors = []string{fmt.Sprintf("%d:%s", head.Seq, head.Hash)}
			}
			_, err = replayAudit(context.Background(), store, o, &out)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestReplayAuditRefusesBadFlags(t *testing.T) {
	store := sealedTrail(t, 1)
	for _, o := range []auditReplayOptions{
		{outcome: "maybe", page: 1}, {from: "yesterday", page: 1}, {anchors: []string{"12"}, page: 1}, {anchors: []string{"1:zz"}, page: 1}, {page: 0},
	} {
		if _, err := replayAudit(context.Background(), store, o, &bytes.Buffer{}); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// TestReplayAuditDetectsTamperingInsideARun: records sealed in one event
// (a batch of reads) are verified one by one too.
func TestReplayAuditDetectsTamperingInsideARun(t *testing.T) {
	for name, c := range map[string]struct {
		edit func([]json.RawMessage) []json.RawMessage
		want error
	}{
		"removed":   {edit: func(r []json.RawMessage) []json.RawMessage { return append(r[:2:2], r[3:]...) }, want: audit.ErrRemoved},
		"reordered": {edit: func(r []json.RawMessage) []json.RawMessage { r[1], r[2] = r[2], r[1]; return r }, want: audit.ErrReordered},
		"altered": {edit: func(r []json.RawMessage) []json.RawMessage {
			r[4] = json.RawMessage(strings.Replace(string(r[4]), `"user_id":"alice"`, `"user_id":"mallory"`, 1))
			return r
		}, want: audit.ErrAltered},
	} {
		t.Run(name, func(t *testing.T) {
			store := sealedBatch(t, 6)
			ctx := context.Background()
			evs, err := store.ReadStream(ctx, domain.AuditStream, eventstore.ReadStreamOptions{})
			if err != nil || len(evs) != 1 {
				t.Fatalf("audit stream: %d events, %v", len(evs), err)
			}
			var run struct {
				Records []json.RawMessage `json:"records"`
			}
			if err := json.Unmarshal(evs[0].Data, &run); err != nil {
				t.Fatal(err)
			}
			run.Records = c.edit(run.Records)
			data, err := json.Marshal(run)
			if err != nil {
				t.Fatal(err)
			}
			tamper(t, store, `UPDATE events SET data = ? WHERE stream = 'audit' AND revision = 0`, data)
			_, err = replayAudit(ctx, store, auditReplayOptions{verify: true, quiet: true, page: 4}, &bytes.Buffer{})
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestReplayAuditActorByEmail(t *testing.T) {
	store := openTrail(t)
	bob := uuid.New()
	ev, err := eventstore.NewEvent(domain.TypeUserEmailReserved, domain.UserEmailReserved{Email: "bob@example.com", UserID: bob, At: time.Unix(1_800_000_000, 0)}, eventstore.Metadata{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(context.Background(), domain.UserEmailStream("bob@example.com").String(), eventstore.NoStream, ev); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ actor, want string }{
		{"Bob@Example.com", bob.String()}, // addresses match without case, as at login
		{"bob", "bob"},                    // ids and access keys pass unchanged
	} {
		got, err := resolveActor(context.Background(), store, tc.actor)
		if err != nil || got != tc.want {
			t.Errorf("resolveActor(%q) = %q, %v; want %q", tc.actor, got, err, tc.want)
		}
	}
	if _, err := resolveActor(context.Background(), store, "nobody@example.com"); err == nil || !strings.Contains(err.Error(), "no user has this e-mail") {
		t.Errorf("an unknown address: %v", err)
	}
}

// --quiet leaves the verdict alone on stderr: no store or progress logs.
func TestReplayAuditQuietPrintsOnlyTheVerdict(t *testing.T) {
	store := sealedTrail(t, 3)
	defer slog.SetDefault(slog.Default())
	root := newRootCommand()
	var stdout, stderr bytes.Buffer
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs([]string{"replay", "audit", "--verify", "--quiet", "--store", "sqlite://" + store.Path()})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if stdout.Len() != 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], "audit trail verified: 3 records") {
		t.Fatalf("stdout %q, stderr:\n%s", stdout.String(), stderr.String())
	}
}
