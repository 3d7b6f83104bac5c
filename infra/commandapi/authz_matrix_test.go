package commandapi_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/auth/token"
)

// The roles of the matrix: the test caller each one is, in the domain
// "default" (its own tenant; "other" is the other tenant).
var matrixRoles = []struct{ role, caller string }{
	{"superadmin", adminToken},
	{"admin", "dadmin"},
	{"user", aliceToken},
	{"monitor", monitorToken},
	{"auditor", auditorToken},
	{"domain-auditor", dauditorToken},
	{"anonymous", ""},
}

// withAuditors is a copy of w with both auditors' want a.
func withAuditors(w map[string]want, a want) map[string]want {
	out := maps.Clone(w)
	out["auditor"], out["domain-auditor"] = a, a
	return out
}

// auditorWant is what an auditor gets where a row names no auditor: a
// read as the "user" role's caller (alice) gets it, except that an
// auditor owns none of alice's objects (rows naming it say so); every
// other request is refused (403) before its handler runs: auditors write
// nothing.
func auditorWant(r matrixRow) want {
	if r.method == "GET" || r.method == "HEAD" || r.method == "OPTIONS" {
		return r.want["user"]
	}
	return same(http.StatusForbidden)
}

// want is the status of a request on an object of the caller's own
// tenant and on one of the other tenant.
type want struct{ own, other int }

// same is a want for routes without a tenant's object (the two variants
// are the same request).
func same(status int) want { return want{status, status} }

// matrixRow is one endpoint: how to build its request for an own or other
// object (building may create fresh objects, for requests that change
// them), and the status each role gets.
type matrixRow struct {
	method, route string // route as registered, for the coverage check
	path          func(own bool) string
	body          func(own bool) string
	header        func(own bool) map[string]string // request headers, if any
	want          map[string]want                  // by role; "anonymous" defaults to 401
}

// TestAuthorizationMatrix sends every /v1 route as every role, on an
// object of the caller's own tenant and on another tenant's, through the
// real app (authentication, access log, commands, projections on SQLite),
// and checks every status. Every registered route must have a row.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	// Streams of GET /v1/events end at once, so that each is read whole;
	// listen runs the change feed they subscribe to.
	e := newEnv(t, envOptions{accessLog: true, streamLifetime: time.Millisecond})
	e.listen(t)
	m := newMatrix(t, e)
	rows := m.rows()

	covered := map[string]bool{}
	for _, r := range rows {
		covered[r.method+" "+r.route] = true
	}
	for _, rt := range e.app.GetRoutes(true) {
		if strings.HasPrefix(rt.Path, "/v1/") && rt.Method != "HEAD" && !covered[rt.Method+" "+rt.Path] {
			t.Errorf("no row of the authorization matrix for %s %s", rt.Method, rt.Path)
		}
	}

	for _, r := range rows {
		for _, role := range matrixRoles {
			w, ok := r.want[role.role]
			switch {
			case ok:
			case role.role == "auditor" || role.role == "domain-auditor":
				w = auditorWant(r)
			default:
				w = same(http.StatusUnauthorized)
			}
			for _, own := range []bool{true, false} {
				path, body := r.path(own), ""
				if r.body != nil {
					body = r.body(own)
				}
				status := w.other
				if own {
					status = w.own
				}
				var res response
				if r.header != nil {
					res = e.doHeaders(t, r.method, path, role.caller, body, r.header(own))
				} else {
					res = e.do(t, r.method, path, role.caller, body)
				}
				if res.status != status {
					t.Errorf("%s %s as %s (own=%v): %d, want %d: %s", r.method, path, role.role, own, res.status, status, res.body)
					continue
				}
				if status >= 400 {
					res.problem(t)
				}
			}
		}
	}
}

// matrix holds the objects the rows name.
type matrix struct {
	t    *testing.T
	e    *env
	seq  atomic.Int64
	bob  testUser // a user of "default" (not the user role's caller)
	carl testUser // carol, of "other"
}

func newMatrix(t *testing.T, e *env) *matrix {
	m := &matrix{t: t, e: e, bob: e.users[bobToken], carl: e.users["carol"]}
	e.run(t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.CreateResourceGroup.Handle(ctx, testMD, commands.CreateResourceGroup{Actor: system, Name: "other-rg"})
	}, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.GrantResourceGroupAccess.Handle(ctx, testMD, commands.GrantResourceGroupAccess{Actor: system, ResourceGroup: "other-rg",
			Grantee: domain.Grantee{Kind: domain.GranteeDomain, Name: "other"}})
	})
	return m
}

// unique is a fresh name.
func (m *matrix) unique(prefix string) string { return fmt.Sprintf("%s%d", prefix, m.seq.Add(1)) }

// pick returns own or other.
func pick[T any](own bool, a, b T) T {
	if own {
		return a
	}
	return b
}

// offered is a fresh agent id with an enrollment offer.
func (m *matrix) offered() string {
	id := m.unique("gpu")
	m.e.run(m.t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.OfferAgentEnrollment.Handle(ctx, testMD, commands.OfferAgentEnrollment{Actor: system, AgentID: id,
			Digest: token.Of(id).String(), ExpiresAt: m.e.clock.Now().Add(time.Hour)})
	})
	return id
}

func (m *matrix) tenant(own bool) string { return pick(own, "default", "other") }

// token issues a fresh token of alice (own) or carol (other) and returns
// its id.
func (m *matrix) token(own bool) string {
	u := pick(own, m.e.users[aliceToken], m.carl)
	secret := m.e.issueToken(m.t, u.ID, time.Hour)
	m.e.wait(m.t, m.e.last)
	g, err := m.e.tenancy.TokenByDigest(context.Background(), token.Of(secret).String())
	if err != nil {
		m.t.Fatal(err)
	}
	return g.ID.String()
}

// session requests a fresh session of alice (own) or carol (other).
func (m *matrix) session(own bool) string {
	u := pick(own, m.e.users[aliceToken], m.carl)
	res, err := m.e.handlers.RequestSession.Handle(context.Background(), testMD, commands.RequestSession{Spec: domain.SessionSpec{
		Name: m.unique("s-"), Owner: domain.Owner{UserID: u.ID.String(), AccessKey: u.AccessKey}, Domain: m.tenant(own),
		Project: pick(own, "default", "ml"), ResourceGroup: "default", Type: domain.SessionInteractive, Image: "cr.io/pytorch:2.4",
		ClusterSize: 1, Resources: domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: domain.Units(1 << 30)},
	}})
	if err != nil {
		m.t.Fatal(err)
	}
	m.e.wait(m.t, res.Position)
	return res.SessionID.String()
}

// image registers a fresh image and returns its id.
func (m *matrix) image() string {
	ref := "cr.io/" + m.unique("img") + ":1"
	m.e.run(m.t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.RegisterImage.Handle(ctx, testMD, commands.RegisterImage{Actor: system, Reference: ref, Architecture: "x86_64"})
	})
	return imageIDOf(ref, "x86_64")
}

// agent registers a fresh agent, for a request that changes it.
func (m *matrix) agent() string {
	id := m.unique("node")
	m.e.run(m.t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.RegisterAgent.Handle(ctx, testMD, commands.RegisterAgent{Spec: domain.AgentSpec{
			ID: id, Architecture: "x86_64", Capacity: domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: domain.Units(1 << 30)}}})
	})
	return id
}

func (m *matrix) rows() []matrixRow {
	const (
		ok      = http.StatusOK
		created = http.StatusCreated
		acc     = http.StatusAccepted
		bad     = http.StatusBadRequest
		no      = http.StatusForbidden
		nf      = http.StatusNotFound
		conf    = http.StatusConflict
	)
	// Shapes of the wants.
	all := func(s int) map[string]want {
		return map[string]want{"superadmin": same(s), "admin": same(s), "user": same(s), "monitor": same(s), "auditor": same(s), "domain-auditor": same(s)}
	}
	auditors := withAuditors
	superOnly := func(s int) map[string]want {
		return map[string]want{"superadmin": same(s), "admin": same(no), "user": same(no), "monitor": same(no)}
	}
	// readsTenant: superadmins read both, everyone else only its own.
	readsTenant := map[string]want{"superadmin": same(ok), "admin": {ok, nf}, "user": {ok, nf}, "monitor": {ok, nf}}
	// adminsTenant: superadmins write both, admins their own; users and
	// monitors are refused in their own tenant and see nothing of the other.
	adminsTenant := func(s int) map[string]want {
		return map[string]want{"superadmin": same(s), "admin": {s, nf}, "user": {no, nf}, "monitor": {no, nf}}
	}
	fixed := func(p string) func(bool) string { return func(bool) string { return p } }
	text := func(s string) func(bool) string { return func(bool) string { return s } }
	pq := func(own bool) string { return "?domain=" + m.tenant(own) }
	project := func(own bool) string { return "/v1/projects/" + pick(own, "default", "ml") + pq(own) }
	user := func(own bool) string { return "/v1/users/" + pick(own, m.bob, m.carl).ID.String() }
	keypair := func(own bool) string { return "/v1/keypairs/" + pick(own, m.bob, m.carl).AccessKey }
	member := func(own bool) string {
		return "/v1/projects/" + pick(own, "default", "ml") + "/members/" + pick(own, m.bob, m.carl).ID.String() + pq(own)
	}
	pytorch := "/v1/images/" + imageIDOf("cr.io/pytorch:2.4", "x86_64")
	alice := m.e.users[aliceToken]

	rows := []matrixRow{
		{method: "POST", route: "/v1/auth/login", path: fixed("/v1/auth/login"),
			body: text(`{"email":"` + alice.Email + `","password":"` + alice.Password + `"}`),
			want: auditors(map[string]want{"superadmin": same(ok), "admin": same(ok), "user": same(ok), "monitor": same(ok), "anonymous": same(ok)}, same(ok))},
		{method: "POST", route: "/v1/auth/session", path: fixed("/v1/auth/session"),
			body: text(`{"email":"` + alice.Email + `","password":"` + alice.Password + `"}`),
			want: auditors(map[string]want{"superadmin": same(ok), "admin": same(ok), "user": same(ok), "monitor": same(ok), "anonymous": same(ok)}, same(ok))},
		// The matrix's callers hold scripts' tokens, not logins: log out
		// has nothing to end (TestWebSessionCookieAndCSRF logs out a login).
		{method: "DELETE", route: "/v1/auth/session", path: fixed("/v1/auth/session"), want: all(conf)},
		{method: "GET", route: "/v1/auth/whoami", path: fixed("/v1/auth/whoami"), want: all(ok)},
		{method: "POST", route: "/v1/auth/tokens", path: fixed("/v1/auth/tokens"), body: text(`{"ttl":600}`), want: all(created)},
		{method: "GET", route: "/v1/auth/tokens", path: fixed("/v1/auth/tokens"), want: all(ok)},
		{method: "DELETE", route: "/v1/auth/tokens/:id", path: func(own bool) string { return "/v1/auth/tokens/" + m.token(own) },
			want: auditors(map[string]want{"superadmin": same(ok), "admin": {ok, nf}, "user": {ok, nf}, "monitor": {no, nf}}, want{no, nf})},

		{method: "POST", route: "/v1/domains", path: fixed("/v1/domains"),
			body: func(bool) string { return `{"name":"` + m.unique("d") + `"}` }, want: superOnly(created)},
		{method: "GET", route: "/v1/domains", path: fixed("/v1/domains"), want: all(ok)},
		{method: "GET", route: "/v1/domains/:id", path: func(own bool) string { return "/v1/domains/" + m.tenant(own) }, want: readsTenant},
		{method: "PATCH", route: "/v1/domains/:id", path: func(own bool) string { return "/v1/domains/" + m.tenant(own) },
			body: func(bool) string { return `{"description":"` + m.unique("v") + `"}` },
			want: map[string]want{"superadmin": same(ok), "admin": {no, nf}, "user": {no, nf}, "monitor": {no, nf}}},

		{method: "POST", route: "/v1/projects", path: fixed("/v1/projects"),
			body: func(own bool) string { return `{"domain":"` + m.tenant(own) + `","name":"` + m.unique("p") + `"}` }, want: adminsTenant(created)},
		{method: "GET", route: "/v1/projects", path: func(own bool) string { return "/v1/projects" + pq(own) }, want: readsTenant},
		// Auditors belong to no project.
		{method: "GET", route: "/v1/projects/:id", path: project, want: auditors(readsTenant, same(nf))},
		{method: "PATCH", route: "/v1/projects/:id", path: project,
			body: func(bool) string { return `{"description":"` + m.unique("v") + `"}` }, want: adminsTenant(ok)},
		{method: "GET", route: "/v1/projects/:id/members", path: func(own bool) string {
			return "/v1/projects/" + pick(own, "default", "ml") + "/members" + pq(own)
		}, want: auditors(readsTenant, same(nf))},
		{method: "PUT", route: "/v1/projects/:id/members/:user_id", path: member, want: adminsTenant(ok)},
		{method: "DELETE", route: "/v1/projects/:id/members/:user_id", path: member, want: adminsTenant(ok)},

		{method: "POST", route: "/v1/users", path: fixed("/v1/users"), body: func(own bool) string {
			return `{"email":"` + m.unique("u") + `@example.com","password":"long enough","domain":"` + m.tenant(own) + `"}`
		}, want: adminsTenant(created)},
		{method: "GET", route: "/v1/users", path: func(own bool) string { return "/v1/users?domain=" + m.tenant(own) }, want: readsTenant},
		{method: "GET", route: "/v1/users/:id", path: user,
			want: map[string]want{"superadmin": same(ok), "admin": {ok, nf}, "user": {nf, nf}, "monitor": {ok, nf}}},
		{method: "PATCH", route: "/v1/users/:id", path: user,
			body: func(bool) string { return `{"full_name":"` + m.unique("n") + `"}` }, want: adminsTenant(ok)},
		{method: "PUT", route: "/v1/users/:id/main-keypair", path: func(own bool) string { return user(own) + "/main-keypair" },
			body: func(own bool) string { return `{"access_key":"` + pick(own, m.bob, m.carl).AccessKey + `"}` }, want: adminsTenant(ok)},

		{method: "POST", route: "/v1/keypairs", path: fixed("/v1/keypairs"), body: func(own bool) string {
			return `{"user_id":"` + pick(own, m.bob, m.carl).ID.String() + `","resource_policy":"default"}`
		}, want: adminsTenant(created)},
		{method: "GET", route: "/v1/keypairs", path: fixed("/v1/keypairs"), want: all(ok)},
		{method: "GET", route: "/v1/keypairs/:id", path: keypair,
			want: map[string]want{"superadmin": same(ok), "admin": {ok, nf}, "user": {nf, nf}, "monitor": {ok, nf}}},
		{method: "PATCH", route: "/v1/keypairs/:id", path: keypair,
			body: func(bool) string { return fmt.Sprintf(`{"rate_limit":%d}`, m.seq.Add(1)) }, want: adminsTenant(ok)},
		{method: "POST", route: "/v1/keypairs/:id/rotate-secret", path: func(own bool) string { return keypair(own) + "/rotate-secret" },
			want: adminsTenant(ok)},
	}
	for _, kind := range []string{"keypair-policies", "user-policies", "project-policies"} {
		field := `"max_vfolder_count"`
		if kind == "keypair-policies" {
			field = `"max_concurrent_sessions"`
		}
		rows = append(rows,
			matrixRow{method: "POST", route: "/v1/" + kind, path: fixed("/v1/" + kind),
				body: func(bool) string { return `{"name":"` + m.unique("pol") + `"}` }, want: superOnly(created)},
			matrixRow{method: "GET", route: "/v1/" + kind, path: fixed("/v1/" + kind), want: all(ok)},
			matrixRow{method: "GET", route: "/v1/" + kind + "/:id", path: fixed("/v1/" + kind + "/default"), want: all(ok)},
			matrixRow{method: "PATCH", route: "/v1/" + kind + "/:id", path: fixed("/v1/" + kind + "/default"),
				body: func(bool) string { return fmt.Sprintf(`{%s:%d}`, field, m.seq.Add(1)) }, want: superOnly(ok)},
		)
	}
	group := func(own bool) string { return "/v1/resource-groups/" + pick(own, "default", "other-rg") }
	rows = append(rows,
		matrixRow{method: "POST", route: "/v1/resource-groups", path: fixed("/v1/resource-groups"),
			body: func(bool) string { return `{"name":"` + m.unique("rg") + `"}` }, want: superOnly(created)},
		matrixRow{method: "GET", route: "/v1/resource-groups", path: fixed("/v1/resource-groups"), want: all(ok)},
		matrixRow{method: "GET", route: "/v1/resource-groups/:id", path: group, want: readsTenant},
		matrixRow{method: "PATCH", route: "/v1/resource-groups/:id", path: group,
			body: func(bool) string { return `{"description":"` + m.unique("v") + `"}` }, want: superOnly(ok)},
		matrixRow{method: "POST", route: "/v1/resource-groups/:id/access", path: func(own bool) string { return group(own) + "/access" },
			body: func(own bool) string { return `{"kind":"domain","name":"` + m.tenant(own) + `"}` }, want: superOnly(ok)},
		matrixRow{method: "DELETE", route: "/v1/resource-groups/:id/access", path: func(own bool) string {
			return group(own) + "/access?kind=keypair&name=" + m.bob.AccessKey
		}, want: superOnly(ok)},

		matrixRow{method: "POST", route: "/v1/images", path: fixed("/v1/images"),
			body: func(bool) string { return `{"reference":"cr.io/` + m.unique("new") + `:1"}` }, want: superOnly(created)},
		matrixRow{method: "GET", route: "/v1/images", path: fixed("/v1/images"), want: all(ok)},
		matrixRow{method: "GET", route: "/v1/images/:id", path: fixed(pytorch), want: all(ok)},
		matrixRow{method: "PATCH", route: "/v1/images/:id", path: fixed(pytorch),
			body: func(bool) string { return `{"labels":{"v":"` + m.unique("l") + `"}}` }, want: superOnly(ok)},
		matrixRow{method: "DELETE", route: "/v1/images/:id", path: func(bool) string { return "/v1/images/" + m.image() }, want: superOnly(ok)},

		// Sessions are requested in the caller's own domain: the "other"
		// variant names a project of the other tenant, which is not the
		// caller's (400 for admins, who may use any project of their own
		// domain; 403 for users, who must belong to it).
		matrixRow{method: "POST", route: "/v1/sessions", path: fixed("/v1/sessions"), body: func(own bool) string {
			return `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g"},"project":"` + pick(own, "default", "ml") + `"}`
		}, want: map[string]want{"superadmin": {created, bad}, "admin": {created, bad}, "user": {created, no}, "monitor": same(no)}},
		matrixRow{method: "GET", route: "/v1/sessions", path: fixed("/v1/sessions"), want: all(ok)},
		matrixRow{method: "GET", route: "/v1/sessions/:id", path: func(own bool) string { return "/v1/sessions/" + m.session(own) }, want: auditors(readsTenant, same(nf))},
		matrixRow{method: "GET", route: "/v1/sessions/:id/logs", path: func(own bool) string { return "/v1/sessions/" + m.session(own) + "/logs" },
			want: auditors(map[string]want{"superadmin": same(conf), "admin": {conf, nf}, "user": {conf, nf}, "monitor": {conf, nf}}, same(nf))},
		// The log by offset, followed, downloaded: the same visibility.
		matrixRow{method: "GET", route: "/v1/sessions/:id/logs", path: func(own bool) string { return "/v1/sessions/" + m.session(own) + "/logs?offset=0" },
			want: auditors(map[string]want{"superadmin": same(conf), "admin": {conf, nf}, "user": {conf, nf}, "monitor": {conf, nf}}, same(nf))},
		matrixRow{method: "GET", route: "/v1/sessions/:id/logs", path: func(own bool) string { return "/v1/sessions/" + m.session(own) + "/logs?follow=true" },
			want: auditors(map[string]want{"superadmin": same(conf), "admin": {conf, nf}, "user": {conf, nf}, "monitor": {conf, nf}}, same(nf))},
		matrixRow{method: "GET", route: "/v1/sessions/:id/logs", path: func(own bool) string { return "/v1/sessions/" + m.session(own) + "/logs?download=true" },
			want: auditors(map[string]want{"superadmin": same(conf), "admin": {conf, nf}, "user": {conf, nf}, "monitor": {conf, nf}}, same(nf))},
		matrixRow{method: "DELETE", route: "/v1/sessions/:id", path: func(own bool) string { return "/v1/sessions/" + m.session(own) },
			want: map[string]want{"superadmin": same(acc), "admin": {acc, nf}, "user": {acc, nf}, "monitor": same(no)}},
		// Opening an app: the session's users, read-only monitors refused;
		// the matrix's sessions wait (no agent), so a visible one is 409.
		matrixRow{method: "POST", route: "/v1/sessions/:id/apps/:app", path: func(own bool) string { return "/v1/sessions/" + m.session(own) + "/apps/terminal" },
			want: map[string]want{"superadmin": same(conf), "admin": {conf, nf}, "user": {conf, nf}, "monitor": same(no)}},
		// Why a session waits, its timeline (as the session), the queue
		// (admins: a domain admin sees its domain's sessions in it).
		matrixRow{method: "GET", route: "/v1/sessions/:id/pending", path: func(own bool) string { return "/v1/sessions/" + m.session(own) + "/pending" },
			want: auditors(readsTenant, same(nf))},
		matrixRow{method: "GET", route: "/v1/sessions/:id/timeline", path: func(own bool) string { return "/v1/sessions/" + m.session(own) + "/timeline" },
			want: auditors(readsTenant, same(nf))},
		matrixRow{method: "GET", route: "/v1/scheduler/queue", path: fixed("/v1/scheduler/queue"),
			want: map[string]want{"superadmin": same(ok), "admin": same(ok), "user": same(no), "monitor": same(no)}},
		// One's own quota standing: everyone's own.
		matrixRow{method: "GET", route: "/v1/quotas/mine", path: fixed("/v1/quotas/mine"), want: all(ok)},
		matrixRow{method: "GET", route: "/v1/agents", path: fixed("/v1/agents"), want: all(ok)},
		// Usage of a domain: its own for everyone, the other tenant's for
		// superadmins only.
		matrixRow{method: "GET", route: "/v1/usage", path: func(own bool) string { return "/v1/usage?domain=" + m.tenant(own) }, want: readsTenant},
		// Agent enrollment: superadmins offer and revoke; enrolling takes
		// no user (a wrong token is 401 for everyone).
		matrixRow{method: "POST", route: "/v1/agents/:id/enrollment", path: func(bool) string { return "/v1/agents/" + m.unique("gpu") + "/enrollment" },
			want: superOnly(created)},
		matrixRow{method: "DELETE", route: "/v1/agents/:id/enrollment", path: func(bool) string { return "/v1/agents/" + m.offered() + "/enrollment" },
			want: superOnly(http.StatusNoContent)},
		matrixRow{method: "POST", route: "/v1/agent-enrollments", path: fixed("/v1/agent-enrollments"),
			body: text(`{"agent_id":"gpu-x","token":"cairn_e_` + strings.Repeat("A", 43) + `","user_key":"` + enrollKey(m.t) + `"}`),
			want: all(http.StatusUnauthorized)},
		matrixRow{method: "POST", route: "/v1/agents/:id/lost", path: func(bool) string { return "/v1/agents/" + m.agent() + "/lost" }, want: superOnly(ok)},
		// The audit trail spans every tenant: superadmins and auditors read
		// it, domain auditors their domain's records (what each sees:
		// TestAuditorsReadTheTrail).
		matrixRow{method: "GET", route: "/v1/audit", path: fixed("/v1/audit"),
			want: auditors(map[string]want{"superadmin": same(ok), "admin": same(no), "user": same(no), "monitor": same(no)}, same(ok))},
		matrixRow{method: "GET", route: "/v1/audit/stream", path: fixed("/v1/audit/stream"),
			want: auditors(map[string]want{"superadmin": same(ok), "admin": same(no), "user": same(no), "monitor": same(no)}, same(ok))},
		// The signed head: who may read the trail, domain auditors too (it
		// names a seq and a hash, no record); 404: no key in this test server.
		matrixRow{method: "GET", route: "/v1/audit/heads/latest", path: fixed("/v1/audit/heads/latest"),
			want: auditors(map[string]want{"superadmin": same(http.StatusNotFound), "admin": same(no), "user": same(no), "monitor": same(no)}, same(http.StatusNotFound))},
		// Every caller may open the change stream; what each receives is
		// its own business (events_test.go).
		matrixRow{method: "GET", route: "/v1/events", path: fixed("/v1/events"), want: all(ok)},
		// The run-time settings are cluster-wide: superadmins only.
		matrixRow{method: "GET", route: "/v1/settings", path: fixed("/v1/settings"), want: superOnly(ok)},
		matrixRow{method: "GET", route: "/v1/settings/history", path: fixed("/v1/settings/history"), want: superOnly(ok)},
		matrixRow{method: "PATCH", route: "/v1/settings", path: fixed("/v1/settings"),
			body: func(bool) string { return fmt.Sprintf(`{"session.default_idle_timeout":%d}`, m.seq.Add(1)) }, want: superOnly(ok)},
	)
	rows = append(rows, m.maintenanceRows()...)
	rows = append(rows, m.vfolderRows()...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].route < rows[j].route })
	return rows
}

// imageIDOf is the route id of an image (readapi's encoding).
func imageIDOf(reference, architecture string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(reference + "@" + architecture))
}
