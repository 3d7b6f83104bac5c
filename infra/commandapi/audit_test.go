package commandapi_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
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

// TestAuditorsReadTheTrail: an auditor reads every record; a domain
// auditor reads the records of its domain (its users', and those done to
// its objects by anyone) in the page, and in the NDJSON export every
// record, the others elided, so that the export still verifies as a
// chain; another domain's record never shows in full.
func TestAuditorsReadTheTrail(t *testing.T) {
	e := newEnv(t, envOptions{accessLog: true})
	carol := e.users["carol"]
	c := e.create(t, aliceToken, validBody) // alice, of "default"
	for _, r := range []struct{ path, caller string }{
		{"/v1/sessions", "carol"},                      // carol, of "other": not default's
		{"/v1/sessions/" + c.ID, "carol"},              // carol on alice's session: default's (404 to her)
		{"/v1/users/" + carol.ID.String(), adminToken}, // a superadmin of "default" on carol
		{"/v1/auth/whoami", "carol"},                   // not default's
	} {
		e.do(t, "GET", r.path, r.caller, "")
	}
	pos := e.waitSealed(t, 5)
	carolOnly := func(rec audit.Record) bool {
		return rec.UserID == carol.ID.String() && (rec.Action == "GET /v1/sessions" || rec.Action == "GET /v1/auth/whoami")
	}

	// The auditor: every record, carol's too.
	var page struct {
		Items []audit.Record `json:"items"`
	}
	r := e.do(t, "GET", fmt.Sprintf("/v1/audit?wait_for_position=%d", pos), auditorToken, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /v1/audit as an auditor = %d %s", r.status, r.body)
	}
	r.decode(t, &page)
	if n := len(slices.DeleteFunc(slices.Clone(page.Items), func(rec audit.Record) bool { return !carolOnly(rec) })); n != 2 {
		t.Fatalf("the auditor sees %d of carol's 2 records: %+v", n, page.Items)
	}

	// The domain auditor's page: default's records only.
	r = e.do(t, "GET", fmt.Sprintf("/v1/audit?wait_for_position=%d", pos), dauditorToken, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /v1/audit as a domain auditor = %d %s", r.status, r.body)
	}
	page.Items = nil
	r.decode(t, &page)
	var actions []string
	for _, rec := range page.Items {
		if carolOnly(rec) {
			t.Errorf("the domain auditor sees another domain's record %+v", rec)
		}
		if rec.Seq <= 5 {
			actions = append(actions, rec.Action)
		}
	}
	if want := []string{"POST /v1/sessions", "GET /v1/sessions/:id", "GET /v1/users/:id"}; !slices.Equal(actions, want) {
		t.Errorf("the domain auditor's first records: %v, want %v", actions, want)
	}

	// Its export: every record, the others elided, verifying as a chain.
	s := e.do(t, "GET", fmt.Sprintf("/v1/audit/stream?wait_for_position=%d", pos), dauditorToken, "")
	if s.status != http.StatusOK {
		t.Fatalf("stream = %d %s", s.status, s.body)
	}
	v := audit.NewVerifier(audit.Genesis)
	var lines []audit.Line
	sc := bufio.NewScanner(bytes.NewReader(s.body))
	for sc.Scan() {
		l, err := audit.ParseLine(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", sc.Bytes(), err)
		}
		if l.Elided == nil && carolOnly(l.Record) {
			t.Errorf("the domain auditor's export holds another domain's record %s", sc.Bytes())
		}
		if err := v.AddLine(l); err != nil {
			t.Fatalf("the domain auditor's export does not verify: %v", err)
		}
		lines = append(lines, l)
	}
	head, err := v.Finish()
	if err != nil || head.Seq < 5 || len(lines) != int(head.Seq) {
		t.Fatalf("export of %d lines: head %+v, %v", len(lines), head, err)
	}
	for i, want := range []bool{false, true, false, false, true} { // elided: seqs 2 and 5
		if (lines[i].Elided != nil) != want {
			t.Errorf("line %d elided: %v, want %v", i+1, lines[i].Elided != nil, want)
		}
	}
	// An elided record whose link was changed is caught.
	lines[1].Elided.PrevHash[0] ^= 1
	v = audit.NewVerifier(audit.Genesis)
	for _, l := range lines {
		if err = v.AddLine(l); err != nil {
			break
		}
	}
	if !errors.Is(err, audit.ErrAltered) {
		t.Fatalf("an altered elided record: %v", err)
	}

	// Its CSV: default's records only.
	s = e.do(t, "GET", fmt.Sprintf("/v1/audit/stream?format=csv&wait_for_position=%d", pos), dauditorToken, "")
	if s.status != http.StatusOK || bytes.Contains(s.body, []byte("GET /v1/auth/whoami")) || !bytes.Contains(s.body, []byte("GET /v1/users/:id")) {
		t.Fatalf("csv = %d %s", s.status, s.body)
	}
}
