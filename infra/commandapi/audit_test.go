package commandapi_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/auditheads"
	"github.com/cairnhq/cairn/infra/await"
)

// waitSealed waits until the audit stream holds n records and returns
// the position of the n-th (an event, not a poll: a subscription).
func (e *env) waitSealed(t *testing.T, n int) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	sub, err := e.store.Subscribe(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	seen := 0
	for msg := range sub.Messages() {
		if msg.CaughtUp || msg.Event.Type != domain.TypeAuditSealed {
			continue
		}
		ev, err := domain.DecodeEvent(msg.Event.Type, msg.Event.Version, msg.Event.Data)
		if err != nil {
			t.Fatal(err)
		}
		if seen += len(ev.(domain.AuditSealed).Records); seen >= n {
			return msg.Event.Position
		}
	}
	t.Fatalf("the audit stream has %d records, want %d: %v", seen, n, sub.Err())
	return 0
}

// TestAuditTrailThroughTheAPI: every request — created, failed, refused
// and denied — is recorded, chained, listed by actor and exported as
// NDJSON that verifies offline; only superadmins read it.
func TestAuditTrailThroughTheAPI(t *testing.T) {
	e := newEnv(t, envOptions{accessLog: true})
	c := e.create(t, aliceToken, validBody)
	if r := e.do(t, "GET", "/v1/sessions/0195a0c0-0000-7000-8000-00000000dead", aliceToken, ""); r.status != http.StatusNotFound {
		t.Fatalf("GET unknown session = %d", r.status)
	}
	if r := e.do(t, "GET", "/v1/sessions", "not-a-token", ""); r.status != http.StatusUnauthorized {
		t.Fatalf("GET with a bad token = %d", r.status)
	}
	if r := e.do(t, "GET", "/v1/audit", aliceToken, ""); r.status != http.StatusForbidden {
		t.Fatalf("GET /v1/audit as a user = %d", r.status)
	}
	pos := e.waitSealed(t, 4)

	r := e.do(t, "GET", fmt.Sprintf("/v1/audit?actor=%s&wait_for_position=%d", e.users[aliceToken].ID, pos), adminToken, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /v1/audit = %d %s", r.status, r.body)
	}
	var page struct {
		Items      []audit.Record `json:"items"`
		NextCursor *string        `json:"next_cursor"`
	}
	r.decode(t, &page)
	type row struct {
		action, entity, id string
		outcome            audit.Outcome
		status             int
	}
	var got []row
	for _, rec := range page.Items {
		got = append(got, row{rec.Action, rec.EntityType, rec.EntityID, rec.Outcome, rec.Status})
	}
	want := []row{
		{"POST /v1/sessions", "session", c.ID, audit.Success, http.StatusCreated},
		{"GET /v1/sessions/:id", "session", "0195a0c0-0000-7000-8000-00000000dead", audit.Failure, http.StatusNotFound},
		{"GET /v1/audit", "audit", "", audit.Denied, http.StatusForbidden},
	}
	if !slices.Equal(got, want) || page.NextCursor != nil {
		t.Fatalf("alice's records:\n got %+v\nwant %+v", got, want)
	}
	if r := e.do(t, "GET", "/v1/audit?outcome=maybe", adminToken, ""); r.status != http.StatusBadRequest {
		t.Fatalf("bad outcome = %d", r.status)
	}

	// The export: NDJSON, every record so far, verifying as a chain.
	s := e.do(t, "GET", fmt.Sprintf("/v1/audit/stream?wait_for_position=%d", pos), adminToken, "")
	if s.status != http.StatusOK || s.header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("stream = %d %s", s.status, s.header.Get("Content-Type"))
	}
	var recs []audit.Record
	sc := bufio.NewScanner(bytes.NewReader(s.body))
	for sc.Scan() {
		var rec audit.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if len(recs) < 4 {
		t.Fatalf("stream has %d records, want at least 4", len(recs))
	}
	head, err := audit.Verify(slices.Values(recs))
	if err != nil {
		t.Fatalf("the export does not verify: %v", err)
	}
	// Tampering with the export is detected.
	recs[1].Status = 200
	if _, err := audit.Verify(slices.Values(recs)); err == nil {
		t.Fatal("an altered export verified")
	}
	if head.Seq != uint64(len(recs)) || recs[0].Time.After(time.Now()) {
		t.Fatalf("head %+v after %d records", head, len(recs))
	}
}

// TestLatestAuditHead: GET /v1/audit/heads/latest answers the head the
// real signer signed last, which verifies under its public key; 404 before
// the first; 403 for those who may not read the trail.
func TestLatestAuditHead(t *testing.T) {
	key, err := auditheads.WriteKey(filepath.Join(t.TempDir(), "head.key"))
	if err != nil {
		t.Fatal(err)
	}
	heads := filepath.Join(t.TempDir(), "heads.ndjson")
	sink, err := auditheads.ParseSink("file:" + heads)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := auditheads.New(auditheads.Config{Key: key, Sinks: []auditheads.Sink{sink}, Every: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- signer.Run(ctx) }()
	defer func() { cancel(); <-done }()
	e := newEnv(t, envOptions{auditHeads: signer})

	if r := e.do(t, "GET", "/v1/audit/heads/latest", adminToken, ""); r.status != http.StatusNotFound {
		t.Fatalf("before the first head: %d %s", r.status, r.body)
	}
	signed := audit.Head{Seq: 42, Hash: audit.Hash{42}}
	signer.Observe(signed)
	await.Until(t, waitBound, "the head signed", func() bool { _, ok := signer.Latest(); return ok })
	r := e.do(t, "GET", "/v1/audit/heads/latest", adminToken, "")
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /v1/audit/heads/latest = %d %s", r.status, r.body)
	}
	pub := key.Public().(ed25519.PublicKey)
	got, err := audit.VerifyHeads(bytes.NewReader(r.body), audit.Keyring{audit.KeyID(pub): pub})
	if err != nil || len(got) != 1 || got[0] != signed {
		t.Fatalf("the answer %s: %v, %v", r.body, got, err)
	}
	if r := e.do(t, "GET", "/v1/audit/heads/latest", aliceToken, ""); r.status != http.StatusForbidden {
		t.Fatalf("as a user: %d", r.status)
	}
}
