package commandapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/auditarchive"
	"github.com/cairnhq/cairn/infra/auditheads"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/maintenance"
)

// GET /v1/system describes the server, and the store's DSN shows no
// credentials (neither the user information nor a password parameter).
func TestSystemThroughTheAPI(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-secret"
	e := newEnv(t, envOptions{storeDSN: "postgres://cairn:" + secret + "@db.example:5432/cairn?password=" + secret + "&sslmode=disable"})
	e.create(t, aliceToken, validBody)
	r := e.do(t, "GET", "/v1/system", adminToken, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /v1/system = %d %s", r.status, r.body)
	}
	if bytes.Contains(r.body, []byte(secret)) || bytes.Contains(r.body, []byte("cairn@")) {
		t.Fatalf("the answer shows the store's credentials: %s", r.body)
	}
	var sys maintenance.System
	r.decode(t, &sys)
	if sys.Version != "test" || !strings.HasPrefix(sys.GoVersion, "go") || sys.StartedAt.IsZero() || sys.DataDirFreeBytes != 1<<30 {
		t.Errorf("system %+v", sys)
	}
	if sys.Store.Backend != "sqlite" || sys.Store.DSN != "postgres://db.example:5432/cairn?sslmode=disable" || sys.Store.Head == 0 {
		t.Errorf("store %+v", sys.Store)
	}
	if sys.Bus.Mode != "embedded" || sys.Bus.URL == "" || !sys.Bus.Connected {
		t.Errorf("bus %+v", sys.Bus)
	}
	if sys.Leases == nil {
		t.Error("leases is null, want a list")
	}
	var names []string
	for _, rm := range sys.ReadModels {
		names = append(names, rm.Name)
		if rm.Position > sys.Store.Head || rm.Lag != sys.Store.Head-rm.Position || rm.Rebuilding {
			t.Errorf("read model %+v with the head at %d", rm, sys.Store.Head)
		}
	}
	if want := []string{"sessions", "agents", "tenancy", "vfolders", "audit-runs", "usage", "occupancy", "settings"}; !slices.Equal(names, want) {
		t.Errorf("read models %v, want %v", names, want)
	}
}

// getRebuild reads a rebuild job through the API.
func (e *env) getRebuild(t *testing.T, id string) maintenance.Rebuild {
	t.Helper()
	r := e.do(t, "GET", "/v1/maintenance/rebuilds/"+id, adminToken, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET rebuild = %d %s", r.status, r.body)
	}
	var job maintenance.Rebuild
	r.decode(t, &job)
	return job
}

// A rebuild started through the API runs to done while queries of the
// read model keep answering; a second one meanwhile is 409, bad bodies
// are 400 naming the field.
func TestRebuildThroughTheAPI(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	e := newEnv(t, envOptions{rebuildGate: gate})
	c := e.create(t, aliceToken, validBody)

	for _, bad := range []struct{ body, field string }{
		{`{"read_model":"no-such-read-model"}`, "read_model"},
		{`{}`, "read_model"},
		{`{"read_model":1}`, "read_model"},
		{`{"read_model":"sessions","extra":true}`, "extra"},
	} {
		r := e.do(t, "POST", "/v1/maintenance/rebuilds", adminToken, bad.body)
		if r.status != http.StatusBadRequest {
			t.Fatalf("POST %s = %d %s", bad.body, r.status, r.body)
		}
		if p := r.problem(t); p.Field != bad.field {
			t.Errorf("POST %s: field %q, want %q", bad.body, p.Field, bad.field)
		}
	}

	r := e.do(t, "POST", "/v1/maintenance/rebuilds", adminToken, `{"read_model":"sessions"}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("POST rebuild = %d %s", r.status, r.body)
	}
	var job maintenance.Rebuild
	r.decode(t, &job)
	if job.State != maintenance.StateRunning || job.ReadModel != "sessions" || r.header.Get("Location") != "/v1/maintenance/rebuilds/"+job.ID {
		t.Fatalf("job %+v, Location %q", job, r.header.Get("Location"))
	}
	if r := e.do(t, "POST", "/v1/maintenance/rebuilds", adminToken, `{"read_model":"sessions"}`); r.status != http.StatusConflict {
		t.Fatalf("a second rebuild = %d %s", r.status, r.body)
	}
	if got := e.getRebuild(t, job.ID); got.State != maintenance.StateRunning {
		t.Fatalf("job %+v while it is held", got)
	}
	var list struct{ Items []maintenance.Rebuild }
	e.do(t, "GET", "/v1/maintenance/rebuilds", adminToken, "").decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].ID != job.ID {
		t.Fatalf("GET /v1/maintenance/rebuilds: %+v", list)
	}
	// The system says which read model is being rebuilt.
	var sys maintenance.System
	e.do(t, "GET", "/v1/system", adminToken, "").decode(t, &sys)
	for _, rm := range sys.ReadModels {
		if rm.Rebuilding != (rm.Name == "sessions") {
			t.Errorf("read model %+v during the rebuild of sessions", rm)
		}
	}

	close(gate)
	for range 5 { // reads while it runs
		if s := e.get(t, aliceToken, c.ID, 0); s.ID != c.ID {
			t.Fatalf("GET session during the rebuild: %+v", s)
		}
	}
	await.Until(t, waitBound, "the rebuild to end", func() bool {
		job = e.getRebuild(t, job.ID)
		return job.State != maintenance.StateRunning
	})
	if job.State != maintenance.StateDone || job.Phase != maintenance.StateDone || job.Position < c.Position || job.Events == 0 || job.FinishedAt == nil {
		t.Fatalf("finished job %+v, want done at or after %d", job, c.Position)
	}
	if s := e.get(t, aliceToken, c.ID, c.Position); s.ID != c.ID || s.Status != "PENDING" {
		t.Fatalf("GET session after the rebuild: %+v", s)
	}
	// And the next rebuild of the same read model may start.
	if r := e.do(t, "POST", "/v1/maintenance/rebuilds", adminToken, `{"read_model":"sessions"}`); r.status != http.StatusAccepted {
		t.Fatalf("a rebuild after the first = %d %s", r.status, r.body)
	}
}

// verify runs a verification through the API and returns its end.
func (e *env) verify(t *testing.T) maintenance.Verification {
	t.Helper()
	r := e.do(t, "POST", "/v1/audit/verify", adminToken, "")
	if r.status != http.StatusAccepted {
		t.Fatalf("POST /v1/audit/verify = %d %s", r.status, r.body)
	}
	var job maintenance.Verification
	r.decode(t, &job)
	if r.header.Get("Location") != "/v1/audit/verify/"+job.ID {
		t.Errorf("Location %q", r.header.Get("Location"))
	}
	await.Until(t, waitBound, "the verification to end", func() bool {
		r := e.do(t, "GET", "/v1/audit/verify/"+job.ID, adminToken, "")
		if r.status != http.StatusOK {
			t.Fatalf("GET verification = %d %s", r.status, r.body)
		}
		r.decode(t, &job)
		return job.State != maintenance.StateRunning
	})
	return job
}

// The chain verified through the API gives its head; a record altered in
// the store afterwards is reported, by seq.
func TestAuditVerifyThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{accessLog: true})
	e.create(t, aliceToken, validBody)
	e.do(t, "GET", "/v1/sessions", bobToken, "")
	e.do(t, "GET", "/v1/audit", aliceToken, "")
	e.waitSealed(t, 3)

	job := e.verify(t)
	if job.State != maintenance.StateDone || job.Head == nil || job.Broken != nil {
		t.Fatalf("verification %+v", job)
	}
	if job.Head.Seq < 3 || job.Head.Records != job.Head.Seq || job.Records != job.Head.Seq || job.Head.At == nil || job.Head.Hash.String() == strings.Repeat("0", 64) {
		t.Fatalf("verified head %+v after %d records", *job.Head, job.Records)
	}

	tamperFirstRecord(t, e.store)
	job = e.verify(t)
	if job.State != maintenance.StateFailed || job.Broken == nil || job.Head != nil {
		t.Fatalf("verification of a tampered trail %+v", job)
	}
	if job.Broken.Problem != "altered" || job.Broken.Seq != 1 || job.Broken.Index != 0 {
		t.Fatalf("broken %+v, want record 1 altered", *job.Broken)
	}
	var list struct{ Items []maintenance.Verification }
	e.do(t, "GET", "/v1/audit/verify", adminToken, "").decode(t, &list)
	if len(list.Items) != 2 || list.Items[0].ID != job.ID || list.Items[1].State != maintenance.StateDone {
		t.Fatalf("GET /v1/audit/verify, the newest first: %+v", list)
	}
}

// tamperFirstRecord rewrites the status of the audit trail's first record
// in the store, as someone with write access to the database could.
func tamperFirstRecord(t *testing.T, store *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	evs, err := store.ReadStream(ctx, domain.AuditStream, eventstore.ReadStreamOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	status := regexp.MustCompile(`"status":\d+`)
	loc := status.FindIndex(evs[0].Data)
	if loc == nil {
		t.Fatalf("no status in %s", evs[0].Data)
	}
	data := slices.Concat(evs[0].Data[:loc[0]], []byte(`"status":299`), evs[0].Data[loc[1]:])
	raw, err := store.OpenRaw(sqlite.Options{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	unlock, err := store.LockWrites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	res, err := raw.ExecContext(ctx, `UPDATE events SET data = ? WHERE position = ?`, data, evs[0].Position)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("tampered with %d events", n)
	}
}

// The audit trail exports as CSV: a header and one row per record, with
// the records' fields; an unknown format is 400.
func TestAuditCSVExport(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{accessLog: true})
	e.create(t, aliceToken, validBody)
	pos := e.waitSealed(t, 1)
	r := e.do(t, "GET", fmt.Sprintf("/v1/audit/stream?format=csv&actor=%s&wait_for_position=%d", e.users[aliceToken].ID, pos), adminToken, "")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("GET csv = %d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	rows, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 || rows[0][0] != "seq" || rows[0][5] != "action" || rows[0][15] != "hash" {
		t.Fatalf("csv %q", rows)
	}
	for _, row := range rows[1:] {
		if row[2] != e.users[aliceToken].ID.String() || len(row[15]) != 64 {
			t.Errorf("row %q", row)
		}
	}
	if r := e.do(t, "GET", "/v1/audit/stream?format=xml", adminToken, ""); r.status != http.StatusBadRequest || r.problem(t).Field != "format" {
		t.Fatalf("GET format=xml = %d %s", r.status, r.body)
	}
}

// TestAuditVerifyAfterArchive: once the oldest runs were archived and
// pruned, the API's verification starts after them (and says so), and the
// audit list no longer shows them.
func TestAuditVerifyAfterArchive(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{accessLog: true})
	e.do(t, "GET", "/v1/sessions", bobToken, "")
	e.waitSealed(t, 1)
	e.do(t, "GET", "/v1/sessions", bobToken, "")
	pos := e.waitSealed(t, 2) // in a run after the first one's
	key, err := auditheads.WriteKey(filepath.Join(t.TempDir(), "head.key"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := auditarchive.Archive(context.Background(), e.store, auditarchive.Options{Through: 1 << 40, Dir: t.TempDir(), Key: key, Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	job := e.verify(t)
	if job.State != maintenance.StateDone || job.ArchivedThrough != res.Through.Seq || job.Head == nil || job.Head.Records != job.Head.Seq-res.Through.Seq {
		t.Fatalf("verification %+v after archiving through %d", job, res.Through.Seq)
	}
	var page struct{ Items []audit.Record }
	e.do(t, "GET", fmt.Sprintf("/v1/audit?wait_for_position=%d", pos), adminToken, "").decode(t, &page)
	if len(page.Items) == 0 || page.Items[0].Seq != res.Through.Seq+1 {
		t.Fatalf("GET /v1/audit after archiving through %d: %+v", res.Through.Seq, page.Items)
	}
}
