package commandapi_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/commandapi"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/auditseq"
	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/auth/httpauth"
	"github.com/cairnhq/cairn/infra/auth/password"
	"github.com/cairnhq/cairn/infra/auth/token"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/maintenance"
	"github.com/cairnhq/cairn/infra/readmodels"
	infravf "github.com/cairnhq/cairn/infra/vfolders"
	"github.com/cairnhq/cairn/infra/vfstorage/localfs"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/agents"
	auditrm "github.com/cairnhq/cairn/projections/audit"
	"github.com/cairnhq/cairn/projections/occupancy"
	"github.com/cairnhq/cairn/projections/sessions"
	settingsrm "github.com/cairnhq/cairn/projections/settings"
	"github.com/cairnhq/cairn/projections/tenancy"
	"github.com/cairnhq/cairn/projections/usage"
	"github.com/cairnhq/cairn/projections/vfolders"
	"github.com/cairnhq/cairn/readapi"
)

// Names of the test callers: e.do and e.token turn them into their real
// bearer tokens. adminToken is a superadmin; alice, bob and the monitor
// live in the domain "default", carol in "other".
const (
	adminToken   = "admin"
	aliceToken   = "alice"
	bobToken     = "bob"
	monitorToken = "mo"
	// auditorToken reads every domain's audit trail, dauditorToken the
	// domain "default"'s; both live in "default".
	auditorToken  = "aud"
	dauditorToken = "daud"
)

// bodyLimit is the test server's body limit.
const bodyLimit = 8 << 10

// waitBound bounds every wait of the tests.
const waitBound = 30 * time.Second

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// system provisions the test world.
var system = commands.Principal{Role: domain.RoleSuperadmin, Domain: "default"}

// env is the API over real parts: an SQLite event store in a temporary
// directory, the command handlers, the sessions, agents and tenancy read
// models kept up to date by running projectors, the access log and the
// real authentication (httpauth). Kernel logs are a fake (a port to an
// agent).
type env struct {
	app      *fiber.App
	store    *sqlite.Store
	handlers *commands.Handlers
	tenancy  *tenancy.ReadModel
	waiter   readapi.Waiter
	logs     *fakeLogs
	clock    *testClock
	vfs      *localfs.Storage
	queries  *readapi.API
	// url is where listen serves the app, once.
	listenOnce sync.Once
	url        string
	db         *projections.DB
	maint      *maintenance.Service
	// users by name: their ids, keypairs and bearer tokens.
	users map[string]testUser
	last  uint64
}

// testUser is a user of the test world.
type testUser struct {
	ID        uuid.UUID
	Email     string
	Password  string
	AccessKey string
	SecretKey string
	Token     string
}

type envOptions struct {
	maxWait time.Duration
	// accessLog records every request in the audit trail, as the server
	// does. (Its records travel with the commands' events, so a command's
	// position is then that of its access record.)
	accessLog bool
	// passwords are the server's argon2id parameters (default: the
	// cheap ones the users are hashed with).
	passwords password.Params
	// anyUploadSize lifts the upload limit (benchmarks).
	anyUploadSize bool
	// queue orders the explanations' queue (default: the scheduler's).
	queue placement.ResourceGroup
	// streamLifetime ends the change streams after this long (default
	// readapi's): the matrix reads a stream whole.
	streamLifetime time.Duration
	// heartbeat is the idle streams' heartbeat, catchUp the events a
	// resumed stream reads at most (default readapi's).
	heartbeat time.Duration
	catchUp   int
	// rebuildGate, when set, holds every rebuild before it starts until
	// it is closed.
	rebuildGate chan struct{}
	// storeDSN is what GET /v1/system is told the store's DSN is.
	storeDSN string
	// auditHeads is the audit head signer GET /v1/audit/heads/latest
	// reads (none by default).
	auditHeads readapi.AuditHeads
}

// testClock is the server's clock, which a test may move.
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
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
	db, err := readmodels.OpenSQLite(store, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close read models: %v", err)
		}
	})
	clock := &testClock{}
	vfs, err := localfs.Open(localfs.Config{Hosts: localfs.Hosts{{Name: "local", Path: filepath.Join(t.TempDir(), "vfolders")}}, CreateHostDirs: true}, discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vfs.Close() })
	sessionsRM, agentsRM, tenancyRM, vfoldersRM, auditRM := sessions.New(db), agents.New(db), tenancy.New(db), vfolders.New(db), auditrm.New(db, store)
	usageRM := usage.New(db)
	occupancyRM := occupancy.New(db)
	// The upload limit is the run-time setting, seeded as the server's
	// flag seeds it.
	settingsDeps := readapi.SettingsDeps{Changes: settingsrm.New(db),
		Defaults: domain.SettingDefaults{domain.SettingVFolderMaxUpload: strconv.FormatInt(uploadLimit(opts), 10)}}
	vfTenancy := infravf.Tenancy{RM: tenancyRM, Hosts: []string{"local"}}
	handlers, err := commands.NewHandlers(store, clock.Now, commands.Options{
		PasswordHasher: password.Hasher{Params: password.CheapParams()},
		VFolders:       commands.VFolderPorts{Tenancy: vfTenancy, Storage: infravf.Storage{S: vfs}, Directory: vfoldersRM},
		Settings:       settingsDeps.Defaults,
	})
	if err != nil {
		t.Fatal(err)
	}
	var (
		waiters          []readapi.Waiter
		tenancyProjector *projections.Projector
	)
	maint := newMaintenance(t, store, db, opts)
	for _, p := range []projections.Projection{sessionsRM, agentsRM, tenancyRM, vfoldersRM, auditRM, usageRM, occupancyRM, settingsDeps.Changes} {
		// What the server does before it serves queries.
		if err := projections.Setup(ctx, db, p); err != nil {
			t.Fatal(err)
		}
		pr := startProjector(t, db, store, p, maint)
		waiters = append(waiters, pr)
		if p == projections.Projection(tenancyRM) {
			tenancyProjector = pr
		}
	}
	startJobs(t, store, vfoldersRM, infravf.Storage{S: vfs}, handlers)
	app, err := httpapi.New(httpapi.Config{BodyLimit: bodyLimit, Logger: discard, StreamRequestBody: commandapi.StreamsBody})
	if err != nil {
		t.Fatal(err)
	}
	if opts.accessLog {
		access, err := accesslog.NewWriter(accesslog.Config{Logger: discard}, store)
		if err != nil {
			t.Fatal(err)
		}
		runInBackground(t, "access log", access.Run)
		app.Use("/v1", accesslog.Middleware(access, nil))
		// The sequencer chains the records, as the server's leader does.
		seq, err := auditseq.New(auditseq.Config{Logger: discard}, store)
		if err != nil {
			t.Fatal(err)
		}
		runInBackground(t, "audit sequencer", seq.Run)
	}
	// With the cache the server runs with: the revocation and
	// deactivation tests check that it never serves a stale answer.
	auth, err := httpauth.New(tenancyRM, httpauth.Config{Clock: clock.Now,
		Freshness: httpauth.Freshness{Committed: tenancyProjector.Position, Changed: tenancyRM.LastApplied}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{app: app, store: store, handlers: handlers, tenancy: tenancyRM, waiter: readapi.WaitAll(waiters...), logs: &fakeLogs{},
		clock: clock, users: map[string]testUser{}, vfs: vfs, db: db, maint: maint}
	// Wired as the server wires them (infra/devserver): the public command
	// endpoints, then the authenticated /v1 group with the commands and the
	// queries.
	queries, err := readapi.New(readapi.Deps{
		Sessions: sessionsRM,
		Agents:   agentsRM,
		Audit:    auditRM,
		Waiter:   e.waiter,
		Logs:     e.logs,
		Tenancy:  tenancyRM,
		MaxWait:  opts.maxWait,
		Clock:    clock.Now,
		VFolders: readapi.VFolderDeps{Folders: vfoldersRM, Tenancy: vfTenancy, Storage: vfs},
		Usage:    usageRM,
		// As the server wires them: the scheduler's queue settings unless
		// a test orders the queue otherwise.
		Occupancy: occupancyRM,
		Queue:     cmp.Or(opts.queue, scheduler.Config{}.WithDefaults().Queue),
		Events:    store,
		Log:       store,
		Logger:    discard,

		StreamLifetime: opts.streamLifetime,
		Heartbeat:      opts.heartbeat,
		StreamCatchUp:  opts.catchUp,
		Settings:       settingsDeps,
		Maintenance:    maint,
		AuditHeads:     opts.auditHeads,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.queries = queries
	cmds, err := commandapi.New(commandapi.Deps{
		Queries:   queries,
		Commands:  handlers,
		Passwords: cmp.Or(opts.passwords, password.CheapParams()),
		VFolders: commandapi.VFolderDeps{Folders: vfoldersRM, Tenancy: vfTenancy, Storage: vfs, MaxUploadSize: func(ctx context.Context) (int64, error) {
			return settingsDeps.Int(ctx, domain.SettingVFolderMaxUpload)
		}},
		Bus:         busSigner(t),
		Maintenance: maint,
	})
	if err != nil {
		t.Fatal(err)
	}
	cmds.MountPublic(app)
	v1 := app.Group("/v1", auth.Middleware)
	cmds.Mount(v1)
	queries.Mount(v1)
	app.Use(httpapi.NotFound)
	e.seed(t)
	return e
}

// seed makes the test world through the commands: policies, the domains
// "default" and "other" with a project "default" and "ml", the resource
// group "default" granted to both domains, two images, and the users
// admin (superadmin), dadmin (admin), alice, bob (users, members of
// default/default), mo (monitor), aud (auditor) and daud (domain auditor) in "default", and carol (user, member of
// other/ml) and oadmin (admin) in "other", each with a main keypair and a
// bearer token.
func (e *env) seed(t testing.TB) {
	t.Helper()
	ctx, h, md := context.Background(), e.handlers, testMD
	step := func(r commands.Result, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		e.last = max(e.last, r.Position)
	}
	// Every main keypair may use the storage host "local" fully.
	step(h.CreateKeypairPolicy.Handle(ctx, md, commands.CreateKeypairPolicy{Actor: system, Name: "default",
		Spec: domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited, MaxContainersPerSession: 16,
			AllowedVFolderHosts: domain.VFolderHosts{"local": domain.VFolderHostPermissions()}}}))
	step(h.CreateUserPolicy.Handle(ctx, md, commands.CreateUserPolicy{Actor: system, Name: "default"}))
	step(h.CreateUserPolicy.Handle(ctx, md, commands.CreateUserPolicy{Actor: system, Name: vfAlice}))
	step(h.CreateProjectPolicy.Handle(ctx, md, commands.CreateProjectPolicy{Actor: system, Name: "default"}))
	for _, d := range []string{"default", "other", "evil"} {
		step(h.CreateDomain.Handle(ctx, md, commands.CreateDomain{Actor: system, Spec: domain.DomainSpec{Name: d}}))
	}
	for _, p := range [][2]string{{"default", "default"}, {"other", "ml"}} {
		step(h.CreateProject.Handle(ctx, md, commands.CreateProject{Actor: system, Spec: domain.ProjectSpec{Domain: p[0], Name: p[1]}}))
	}
	step(h.CreateResourceGroup.Handle(ctx, md, commands.CreateResourceGroup{Actor: system, Name: "default"}))
	for _, d := range []string{"default", "other"} {
		step(h.GrantResourceGroupAccess.Handle(ctx, md, commands.GrantResourceGroupAccess{Actor: system, ResourceGroup: "default",
			Grantee: domain.Grantee{Kind: domain.GranteeDomain, Name: d}}))
	}
	for _, ref := range []string{"cr.io/pytorch:2.4", "localhost/busybox:latest"} {
		step(h.RegisterImage.Handle(ctx, md, commands.RegisterImage{Actor: system, Reference: ref, Architecture: "x86_64"}))
	}
	for _, u := range []struct {
		name, domain, project string
		role                  domain.Role
		email, policy         string
	}{
		{name: adminToken, domain: "default", project: "default", role: domain.RoleSuperadmin},
		{name: "dadmin", domain: "default", role: domain.RoleAdmin},
		{name: aliceToken, domain: "default", project: "default", role: domain.RoleUser},
		{name: bobToken, domain: "default", project: "default", role: domain.RoleUser},
		{name: monitorToken, domain: "default", role: domain.RoleMonitor},
		{name: auditorToken, domain: "default", role: domain.RoleAuditor},
		{name: dauditorToken, domain: "default", role: domain.RoleDomainAuditor},
		{name: "carol", domain: "other", project: "ml", role: domain.RoleUser},
		{name: "oadmin", domain: "other", role: domain.RoleAdmin},
		// The virtual folder tests' callers (vfolders_helpers_test.go).
		{name: vfAlice, domain: "default", project: "default", role: domain.RoleUser, policy: vfAlice},
		{name: vfBob, domain: "default", project: "default", role: domain.RoleUser, email: "bob@cairn.test"},
		{name: vfCarol, domain: "default", role: domain.RoleUser, email: "carol@cairn.test"},
		{name: vfAdmin, domain: "default", role: domain.RoleAdmin},
		{name: vfEve, domain: "evil", role: domain.RoleUser, email: "eve@evil.test"},
	} {
		e.users[u.name] = e.addUserWith(t, u.name, u.email, u.domain, u.project, u.role, u.policy)
	}
	e.wait(t, e.last)
}

// addUserWith creates a user with a main keypair and a bearer token, an
// e-mail address (default <name>@example.com) and a user resource policy
// (default none).
func (e *env) addUserWith(t testing.TB, name, email, domainName, project string, role domain.Role, policy string) testUser {
	t.Helper()
	ctx, h := context.Background(), e.handlers
	u := testUser{Email: cmp.Or(email, name+"@example.com"), Password: "password-of-" + name}
	res, err := h.CreateUser.Handle(ctx, commands.Metadata{RequestID: "create-" + name}, commands.CreateUser{Actor: system,
		Spec: domain.UserSpec{Email: u.Email, Domain: domainName, Role: role, ResourcePolicy: policy}, Password: u.Password})
	if err != nil {
		t.Fatal(err)
	}
	u.ID = res.UserID
	if project != "" {
		r, err := h.AddProjectMember.Handle(ctx, testMD, commands.AddProjectMember{Actor: system, Domain: domainName, Project: project, UserID: u.ID})
		if err != nil {
			t.Fatal(err)
		}
		e.last = max(e.last, r.Position)
	}
	kp, err := h.IssueKeypair.Handle(ctx, testMD, commands.IssueKeypair{Actor: system, UserID: u.ID, ResourcePolicy: "default", Main: true})
	if err != nil {
		t.Fatal(err)
	}
	u.AccessKey, u.SecretKey = kp.AccessKey, kp.SecretKey
	u.Token = e.issueToken(t, u.ID, time.Hour)
	e.last = max(e.last, kp.Position)
	return u
}

// issueToken issues a bearer token for a user, valid for ttl.
func (e *env) issueToken(t testing.TB, user uuid.UUID, ttl time.Duration) string {
	t.Helper()
	secret, tok, err := token.Issue(token.Bearer, e.clock.Now(), ttl)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.handlers.IssueToken.Handle(context.Background(), testMD, commands.IssueToken{Actor: system, UserID: user,
		Kind: domain.TokenBearer, Digest: tok.Digest.String(), ExpiresAt: tok.ExpiresAt})
	if err != nil {
		t.Fatal(err)
	}
	e.last = max(e.last, res.Position)
	return secret
}

// run runs commands as the test world's provisioner and waits until the
// read models show them.
func (e *env) run(t testing.TB, cmds ...func(ctx context.Context, h *commands.Handlers) (commands.Result, error)) uint64 {
	t.Helper()
	for _, cmd := range cmds {
		res, err := cmd(context.Background(), e.handlers)
		if err != nil {
			t.Fatal(err)
		}
		e.last = max(e.last, res.Position)
	}
	e.wait(t, e.last)
	return e.last
}

// token is the bearer token of a test caller's name; anything else is
// sent as it is.
func (e *env) token(name string) string {
	if u, ok := e.users[name]; ok {
		return u.Token
	}
	return name
}

// wait waits until every read model reflects position.
func (e *env) wait(t testing.TB, position uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if err := e.waiter.WaitFor(ctx, position); err != nil {
		t.Fatalf("wait for %d: %v", position, err)
	}
}

// runInBackground runs fn until the test ends, when it must return nil.
func runInBackground(t testing.TB, name string, fn func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(waitBound):
			t.Errorf("%s did not stop", name)
		}
	})
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
		req.Header.Set("Authorization", "Bearer "+e.token(token))
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

func (f *fakeLogs) OpenKernelLog(_ context.Context, agentID, kernelID string, r readapi.LogRange) (readapi.LogStream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s/%s/%+v", agentID, kernelID, r))
	if agentID == "" || kernelID == "" {
		return nil, domain.Errorf("fake.logs", domain.KindNotFound, "no such kernel")
	}
	log := "hello from " + kernelID + "\n"
	from := min(r.Offset, int64(len(log)))
	to := int64(len(log))
	if r.Limit > 0 {
		to = min(to, from+r.Limit)
	}
	return &cannedLog{Reader: strings.NewReader(log[from:to]), start: from, next: to, complete: to == int64(len(log))}, nil
}

// cannedLog is a log stream over fixed bytes.
type cannedLog struct {
	*strings.Reader
	start, next int64
	complete    bool
}

func (l *cannedLog) Start() int64       { return l.start }
func (l *cannedLog) End() (int64, bool) { return l.next, l.complete }
func (l *cannedLog) Close() error       { return nil }

func (f *fakeLogs) lastCall() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return ""
	}
	return f.calls[len(f.calls)-1]
}

// eventstoreAll reads a whole stream.
var eventstoreAll = eventstore.ReadStreamOptions{}

// streamLength counts the events of a session's stream.
func (e *env) streamLength(t *testing.T, id string) int {
	t.Helper()
	sid, err := uuid.Parse(id)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := e.store.ReadStream(context.Background(), domain.SessionStream(sid).String(), eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}
