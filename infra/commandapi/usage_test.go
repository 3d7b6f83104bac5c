package commandapi_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// usageAnswer is the part of GET /v1/usage the tests read.
type usageAnswer struct {
	GroupBy string `json:"group_by"`
	From    string `json:"from"`
	To      string `json:"to"`
	Items   []struct {
		Day            string             `json:"day"`
		UserID         string             `json:"user_id"`
		UserEmail      string             `json:"user_email"`
		UserName       string             `json:"user_name"`
		Domain         string             `json:"domain"`
		Project        string             `json:"project"`
		Sessions       int64              `json:"sessions"`
		RunningSeconds float64            `json:"running_seconds"`
		CPUHours       float64            `json:"cpu_hours"`
		MemGiBHours    float64            `json:"mem_gib_hours"`
		GPUHours       float64            `json:"gpu_hours"`
		GPUShareHours  float64            `json:"gpu_share_hours"`
		Slots          map[string]float64 `json:"slots"`
	} `json:"items"`
}

// usageSession runs a one-kernel session of user u in dom/project (1 CPU,
// 1 GiB, a 0.5 share of device) on agent, scheduled now; it returns the
// request's result.
func (e *env) usageSession(t *testing.T, u testUser, dom, project, agent, device string) commands.RequestSessionResult {
	t.Helper()
	ctx := context.Background()
	res, err := e.handlers.RequestSession.Handle(ctx, testMD, commands.RequestSession{Spec: domain.SessionSpec{
		Name: "stats", Owner: domain.Owner{UserID: u.ID.String(), AccessKey: u.AccessKey}, Domain: dom, Project: project,
		ResourceGroup: "default", Type: domain.SessionInteractive, Image: "cr.io/pytorch:2.4", ClusterSize: 1,
		Resources: domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: domain.Units(1 << 30), domain.SlotCUDAShares: 500},
	}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.handlers.ScheduleSession.Handle(ctx, testMD, commands.ScheduleSession{SessionID: res.SessionID, Kernels: []domain.KernelPlacement{
		{KernelID: res.KernelIDs[0], AgentID: agent, Devices: []domain.DeviceShare{{DeviceID: device, Amount: 500}}}}})
	if err != nil {
		t.Fatal(err)
	}
	e.last = max(e.last, out.Position)
	return res
}

// usageWorld: alice's session in default/default held for 30 minutes and
// released; bob's (default/default) and carol's (other/ml) still running.
func usageWorld(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, envOptions{})
	e.last = max(e.last, e.registerAgent(t, "node-u"))
	alice := e.usageSession(t, e.users[aliceToken], "default", "default", "node-u", "GPU-0")
	e.usageSession(t, e.users[bobToken], "default", "default", "node-u", "GPU-1")
	e.usageSession(t, e.users["carol"], "other", "ml", "node-u", "GPU-1")
	e.clock.Advance(30 * time.Minute)
	e.run(t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.TerminateSession.Handle(ctx, testMD, commands.TerminateSession{SessionID: alice.SessionID})
	}, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.ReportKernelStatus.Handle(ctx, testMD, commands.ReportKernelStatus{SessionID: alice.SessionID, KernelID: alice.KernelIDs[0],
			AgentID: "node-u", Phase: domain.PhaseRemoved, ContainerID: "c-alice"})
	})
	return e
}

func (e *env) usage(t *testing.T, token, query string) usageAnswer {
	t.Helper()
	r := e.do(t, "GET", "/v1/usage"+query, token, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /v1/usage%s as %s: %d %s", query, token, r.status, r.body)
	}
	var a usageAnswer
	r.decode(t, &a)
	return a
}

// subjects sums the sessions of an answer's rows by their subject (user
// id, or domain, or domain/project); the test's spans may cross a UTC
// midnight, so a subject may have two rows.
func subjects(a usageAnswer) map[string]int64 {
	out := map[string]int64{}
	for _, r := range a.Items {
		key := r.Domain
		switch {
		case r.UserID != "":
			key = r.UserID
		case r.Project != "":
			key += "/" + r.Project
		}
		out[key] += r.Sessions
	}
	return out
}

// TestUsageSeesWhatTheCallerMay: users see their own usage only, admins
// and monitors their domain's, superadmins every domain's; another
// tenant's domain or user is 404.
func TestUsageSeesWhatTheCallerMay(t *testing.T) {
	t.Parallel()
	e := usageWorld(t)
	alice, bob, carol := e.users[aliceToken].ID.String(), e.users[bobToken].ID.String(), e.users["carol"].ID.String()

	own := e.usage(t, aliceToken, "")
	if got := subjects(own); len(got) != 1 || got[alice] != 1 {
		t.Fatalf("alice sees %v, want only her own session", got)
	}
	var cpu, shares, seconds float64
	for _, r := range own.Items {
		if r.UserEmail != e.users[aliceToken].Email || r.Domain != "default" {
			t.Errorf("row %+v", r)
		}
		cpu, shares, seconds = cpu+r.CPUHours, shares+r.GPUShareHours, seconds+r.RunningSeconds
	}
	// Held 30 minutes of the test clock, plus the real time the commands took.
	if cpu < 0.5 || cpu > 0.51 || shares < 0.25 || shares > 0.26 || seconds < 1800 || seconds > 1836 {
		t.Errorf("alice's usage: cpu %g h, shares %g h, %g s; want about 0.5, 0.25 and 1800", cpu, shares, seconds)
	}
	if own.GroupBy != "user" || own.To != e.clock.Now().UTC().Format(time.DateOnly) ||
		own.From != e.clock.Now().UTC().AddDate(0, 0, -29).Format(time.DateOnly) {
		t.Errorf("defaults: %s %s..%s", own.GroupBy, own.From, own.To)
	}

	for _, tc := range []struct {
		caller, query string
		want          map[string]int64
	}{
		{"dadmin", "", map[string]int64{alice: 1, bob: 1}},
		{monitorToken, "", map[string]int64{alice: 1, bob: 1}},
		{"oadmin", "", map[string]int64{carol: 1}},
		{"dadmin", "?user=" + bob, map[string]int64{bob: 1}},
		{adminToken, "", map[string]int64{alice: 1, bob: 1, carol: 1}},
		{adminToken, "?group_by=domain", map[string]int64{"default": 2, "other": 1}},
		{adminToken, "?group_by=project&domain=other", map[string]int64{"other/ml": 1}},
		{adminToken, "?group_by=project&project=default", map[string]int64{"default/default": 2}},
		{"dadmin", "?group_by=project", map[string]int64{"default/default": 2}},
		{aliceToken, "?group_by=domain", map[string]int64{"default": 1}},
		{aliceToken, "?user=" + alice + "&domain=default", map[string]int64{alice: 1}},
	} {
		got := subjects(e.usage(t, tc.caller, tc.query))
		if len(got) != len(tc.want) {
			t.Errorf("%s %s: %v, want %v", tc.caller, tc.query, got, tc.want)
			continue
		}
		for k, n := range tc.want {
			if got[k] != n {
				t.Errorf("%s %s: %v, want %v", tc.caller, tc.query, got, tc.want)
			}
		}
	}

	for _, tc := range []struct{ caller, query string }{
		{aliceToken, "?user=" + bob},
		{aliceToken, "?domain=other"},
		{"dadmin", "?domain=other"},
		{"dadmin", "?user=" + carol},
		{monitorToken, "?user=" + carol},
		{"oadmin", "?user=" + alice},
	} {
		r := e.do(t, "GET", "/v1/usage"+tc.query, tc.caller, "")
		if r.status != http.StatusNotFound || r.problem(t).Kind != "not-found" {
			t.Errorf("%s %s: %d %s, want 404", tc.caller, tc.query, r.status, r.body)
		}
	}
	if r := e.do(t, "GET", "/v1/usage", "", ""); r.status != http.StatusUnauthorized {
		t.Errorf("anonymous: %d", r.status)
	}
}

// TestUsageCSV: format=csv is the JSON answer's rows as text/csv with a
// header row, as an attachment.
func TestUsageCSV(t *testing.T) {
	t.Parallel()
	e := usageWorld(t)
	// A username a spreadsheet would run as a formula.
	evil := "=HYPERLINK(\"http://evil.test\",\"x\")"
	e.run(t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.ModifyUser.Handle(ctx, testMD, commands.ModifyUser{Actor: system, UserID: e.users[bobToken].ID, Changes: domain.UserChanges{Username: &evil}})
	})
	asJSON := e.usage(t, "dadmin", "?group_by=user")
	r := e.do(t, "GET", "/v1/usage?group_by=user&format=csv", "dadmin", "")
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		!strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment; filename=usage-user-") {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
	recs, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := "day,user_id,user_email,user_name,domain,sessions,running_seconds,cpu_hours,mem_gib_hours,gpu_hours,gpu_share_hours"
	if len(recs) == 0 || strings.Join(recs[0], ",") != header {
		t.Fatalf("header %v, want %s", recs, header)
	}
	if len(recs)-1 != len(asJSON.Items) || len(asJSON.Items) < 2 {
		t.Fatalf("%d CSV rows, %d JSON rows", len(recs)-1, len(asJSON.Items))
	}
	sawBob := false
	for i, it := range asJSON.Items {
		rec := recs[i+1]
		if rec[0] != it.Day || rec[1] != it.UserID || rec[2] != it.UserEmail || rec[4] != it.Domain {
			t.Errorf("row %d: %v, JSON %+v", i, rec, it)
		}
		if it.UserID == e.users[bobToken].ID.String() {
			sawBob = true
			if it.UserName != evil || rec[3] != "'"+evil {
				t.Errorf("bob's name: JSON %q, CSV %q; want the name, and the CSV cell quoted", it.UserName, rec[3])
			}
		}
	}
	if !sawBob {
		t.Error("no row of bob")
	}
	byDomain := e.do(t, "GET", "/v1/usage?group_by=project&format=csv", "dadmin", "")
	if first, _, _ := strings.Cut(string(byDomain.body), "\n"); first != "day,domain,project,sessions,running_seconds,cpu_hours,mem_gib_hours,gpu_hours,gpu_share_hours" {
		t.Errorf("project header %q", first)
	}
}

// TestUsageRefusesBadInput: each bad parameter is a 400 naming it.
func TestUsageRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	for _, tc := range []struct{ query, field string }{
		{"?group_by=kernel", "group_by"},
		{"?format=xml", "format"},
		{"?from=2025-13-01&to=2025-12-31", "from"},
		{"?to=yesterday", "to"},
		{"?from=2025-03-02&to=2025-03-01", "from"},
		{"?from=2024-01-01&to=2025-01-01", "to"},
		{"?user=alice", "user"},
	} {
		r := e.do(t, "GET", "/v1/usage"+tc.query, aliceToken, "")
		if r.status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", tc.query, r.status, r.body)
			continue
		}
		if p := r.problem(t); p.Field != tc.field {
			t.Errorf("%s: field %q, want %q (%s)", tc.query, p.Field, tc.field, p.Detail)
		}
	}
	if r := e.do(t, "GET", "/v1/usage?from=2024-01-01&to=2024-12-31", aliceToken, ""); r.status != http.StatusOK {
		t.Errorf("366 days: %d %s", r.status, r.body)
	}
}
