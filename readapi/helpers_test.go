package readapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/httpapi"
	infravf "github.com/cairnhq/cairn/infra/vfolders"
	"github.com/cairnhq/cairn/infra/vfstorage/localfs"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/agents"
	"github.com/cairnhq/cairn/projections/sessions"
	"github.com/cairnhq/cairn/projections/vfolders"
	"github.com/cairnhq/cairn/readapi"
)

// Tokens of the test callers.
const (
	adminToken   = "admin-token"
	aliceToken   = "alice-token"
	bobToken     = "bob-token"
	monitorToken = "monitor-token"
)

// bodyLimit is the test server's body limit.
const bodyLimit = 8 << 10

// waitBound bounds every wait of the tests.
const waitBound = 30 * time.Second

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// env is the API over real parts: an SQLite event store in a temporary
// directory, the command handlers, and the sessions and agents read models
// kept up to date by running projectors. Logs and images are fakes (they
// are ports to an agent and a registry).
type env struct {
	app      *fiber.App
	store    *sqlite.Store
	handlers *commands.Handlers
	waiter   readapi.Waiter
	logs     *fakeLogs
	vfs      *localfs.Storage
	tenancy  *fakeTenancy
}

type envOptions struct {
	maxWait time.Duration
	// anyUploadSize lifts the upload limit (benchmarks).
	anyUploadSize bool
}

func newEnv(t testing.TB, opts envOptions) *env {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cairn.db"), sqlite.Options{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	db, err := projections.OpenSQLite(store, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close read models: %v", err)
		}
	})
	vfs, err := localfs.Open(localfs.Config{Hosts: localfs.Hosts{{Name: "local", Path: filepath.Join(t.TempDir(), "vfolders")}}, CreateHostDirs: true}, discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vfs.Close() })
	tenancy := newFakeTenancy()
	sessionsRM, agentsRM, vfoldersRM := sessions.New(db), agents.New(db), vfolders.New(db)
	handlers, err := commands.NewHandlers(store, time.Now, commands.Options{VFolders: commands.VFolderPorts{
		Tenancy: tenancy, Storage: infravf.Storage{S: vfs}, Directory: vfoldersRM}})
	if err != nil {
		t.Fatal(err)
	}
	var waiters []readapi.Waiter
	for _, p := range []projections.Projection{sessionsRM, agentsRM, vfoldersRM} {
		// What the server does before it serves queries.
		if err := projections.Setup(ctx, db, p); err != nil {
			t.Fatal(err)
		}
		waiters = append(waiters, startProjector(t, db, store, p))
	}
	startJobs(t, store, vfoldersRM, infravf.Storage{S: vfs}, handlers)
	app, err := httpapi.New(httpapi.Config{BodyLimit: bodyLimit, Logger: discard, StreamRequestBody: readapi.StreamsBody})
	if err != nil {
		t.Fatal(err)
	}
	auth := httpapi.NewTokenAuth(map[string]httpapi.Principal{
		adminToken:   {UserID: "admin", AccessKey: "AKADMIN", Role: readapi.RoleSuperadmin, Domain: "default"},
		aliceToken:   {UserID: "alice", AccessKey: "AKALICE", Role: readapi.RoleUser, Domain: "default"},
		bobToken:     {UserID: "bob", AccessKey: "AKBOB", Role: readapi.RoleUser, Domain: "default"},
		monitorToken: {UserID: "mo", AccessKey: "AKMO", Role: readapi.RoleMonitor, Domain: "default"},
		vfAlice:      {UserID: vfAliceID.String(), AccessKey: "AKVFA", Role: readapi.RoleUser, Domain: "default"},
		vfBob:        {UserID: vfBobID.String(), AccessKey: "AKVFB", Role: readapi.RoleUser, Domain: "default"},
		vfCarol:      {UserID: vfCarolID.String(), AccessKey: "AKVFC", Role: readapi.RoleUser, Domain: "default"},
		vfAdmin:      {UserID: vfAdminID.String(), AccessKey: "AKVFD", Role: readapi.RoleAdmin, Domain: "default"},
		vfEve:        {UserID: vfEveID.String(), AccessKey: "AKVFE", Role: readapi.RoleUser, Domain: "evil"},
	})
	e := &env{app: app, store: store, handlers: handlers, waiter: readapi.WaitAll(waiters...), logs: &fakeLogs{}, vfs: vfs, tenancy: tenancy}
	err = readapi.Mount(app, readapi.Deps{
		Commands: handlers,
		Sessions: sessionsRM,
		Agents:   agentsRM,
		Waiter:   e.waiter,
		Logs:     e.logs,
		Images:   fakeImages{"cr.io/pytorch:2.4": true, "busybox:latest": true},
		Auth:     auth.Middleware,
		MaxWait:  opts.maxWait,
		VFolders: readapi.VFolderDeps{Folders: vfoldersRM, Tenancy: tenancy, Storage: vfs, MaxUploadSize: uploadLimit(opts)},
	})
	if err != nil {
		t.Fatal(err)
	}
	app.Use(httpapi.NotFound)
	return e
}

// startProjector runs a projector of p until the test ends, when Run
// must return nil.
func startProjector(t testing.TB, db *projections.DB, store *sqlite.Store, p projections.Projection) *projections.Projector {
	t.Helper()
	pr, err := projections.NewProjector(db, store, p, projections.Options{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pr.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("projector %s: %v", pr.Name(), err)
			}
		case <-time.After(waitBound):
			t.Errorf("projector %s did not stop", pr.Name())
		}
	})
	return pr
}

// response is an answer, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// problem decodes a problem+json answer, failing the test if it is not one.
func (r response) problem(t *testing.T) httpapi.Problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != httpapi.ProblemContentType {
		t.Fatalf("content type %q, want %q (status %d, body %s)", ct, httpapi.ProblemContentType, r.status, r.body)
	}
	var p httpapi.Problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("problem body %s: %v", r.body, err)
	}
	if p.Status != r.status {
		t.Fatalf("problem status %d, answer status %d", p.Status, r.status)
	}
	return p
}

// decode decodes a JSON answer into v.
func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
}

// do sends a request through app.Test.
func (e *env) do(t testing.TB, method, path, token, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// created is the answer of POST /v1/sessions.
type created struct {
	ID        string   `json:"id"`
	Status    string   `json:"status"`
	Position  uint64   `json:"position"`
	KernelIDs []string `json:"kernel_ids"`
}

// session is the part of a session answer the tests look at.
type session struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Status       string   `json:"status"`
	StatusReason string   `json:"status_reason"`
	Type         string   `json:"type"`
	Domain       string   `json:"domain"`
	Project      string   `json:"project"`
	Owner        owner    `json:"owner"`
	AgentIDs     []string `json:"agent_ids"`
	Devices      []struct {
		KernelID string `json:"kernel_id"`
		AgentID  string `json:"agent_id"`
		DeviceID string `json:"device_id"`
		Amount   string `json:"amount"`
	} `json:"devices"`
	RequestedSlots map[string]string `json:"requested_slots"`
	Position       uint64            `json:"position"`
	Kernels        []struct {
		ID      string `json:"id"`
		Role    string `json:"role"`
		AgentID string `json:"agent_id"`
		Status  string `json:"status"`
	} `json:"kernels"`
}

type owner struct {
	UserID    string `json:"user_id"`
	AccessKey string `json:"access_key"`
}

const validBody = `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g"}}`

// create requests a session as token's caller and checks the 201.
func (e *env) create(t *testing.T, token, body string) created {
	t.Helper()
	r := e.do(t, "POST", "/v1/sessions", token, body)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var c created
	r.decode(t, &c)
	return c
}

// get reads a session after waiting for position.
func (e *env) get(t *testing.T, token, id string, position uint64) session {
	t.Helper()
	r := e.do(t, "GET", fmt.Sprintf("/v1/sessions/%s?wait_for_position=%d", id, position), token, "")
	if r.status != http.StatusOK {
		t.Fatalf("get %s: %d %s", id, r.status, r.body)
	}
	var s session
	r.decode(t, &s)
	return s
}

// fakeImages is an image catalog.
type fakeImages map[string]bool

func (f fakeImages) Known(ref string) bool { return f[ref] }

// fakeLogs serves canned logs and records what it was asked.
type fakeLogs struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeLogs) KernelLogs(_ context.Context, agentID, kernelID string, tail int) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s/%s/%d", agentID, kernelID, tail))
	if agentID == "" || kernelID == "" {
		return nil, domain.Errorf("fake.logs", domain.KindNotFound, "no such kernel")
	}
	return []byte("hello from " + kernelID + "\n"), nil
}

func (f *fakeLogs) lastCall() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return ""
	}
	return f.calls[len(f.calls)-1]
}

// streamLength counts the events of a session's stream.
func (e *env) streamLength(t *testing.T, id string) int {
	t.Helper()
	sid, err := uuid.Parse(id)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := e.store.ReadStream(context.Background(), commands.SessionStream(sid), eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}
