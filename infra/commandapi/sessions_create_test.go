package commandapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
)

func TestCreateSessionThenGetItPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	r := e.do(t, "POST", "/v1/sessions", aliceToken, validBody)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var c created
	r.decode(t, &c)
	if c.ID == "" || c.Status != "PENDING" || c.Position == 0 || len(c.KernelIDs) != 1 {
		t.Fatalf("create answer %s", r.body)
	}
	if loc := r.header.Get("Location"); loc != "/v1/sessions/"+c.ID {
		t.Errorf("Location %q", loc)
	}

	s := e.get(t, aliceToken, c.ID, c.Position)
	// The answer's position is the append's last (its access record comes
	// after the session's events), so the session is at or before it.
	if s.ID != c.ID || s.Status != "PENDING" || s.Position == 0 || s.Position > c.Position {
		t.Fatalf("session %+v, want %s PENDING at or before %d", s, c.ID, c.Position)
	}
	// Owner and domain come from the caller; the rest from the defaults.
	alice := e.users[aliceToken]
	if s.Owner != (owner{UserID: alice.ID.String(), AccessKey: alice.AccessKey}) || s.Domain != "default" || s.Project != "default" {
		t.Errorf("owner %+v domain %q project %q", s.Owner, s.Domain, s.Project)
	}
	if s.Type != "interactive" || !strings.HasPrefix(s.Name, "session-") {
		t.Errorf("type %q name %q", s.Type, s.Name)
	}
	if s.RequestedSlots["cpu"] != "1" || s.RequestedSlots["mem"] != "1073741824" {
		t.Errorf("requested slots %v", s.RequestedSlots)
	}
	if len(s.Kernels) != 1 || s.Kernels[0].ID != c.KernelIDs[0] || s.Kernels[0].Role != "main" || s.Kernels[0].Status != "PENDING" {
		t.Errorf("kernels %+v", s.Kernels)
	}
}

func TestCreateBatchSessionWithEverything(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	alice := e.users[aliceToken].ID
	e.run(t,
		func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
			return h.CreateProject.Handle(ctx, testMD, commands.CreateProject{Actor: system, Spec: domain.ProjectSpec{Domain: "default", Name: "ml"}})
		},
		func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
			return h.AddProjectMember.Handle(ctx, testMD, commands.AddProjectMember{Actor: system, Domain: "default", Project: "ml", UserID: alice})
		},
		func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
			return h.CreateResourceGroup.Handle(ctx, testMD, commands.CreateResourceGroup{Actor: system, Name: "gpu"})
		},
		func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
			return h.GrantResourceGroupAccess.Handle(ctx, testMD, commands.GrantResourceGroupAccess{Actor: system, ResourceGroup: "gpu",
				Grantee: domain.Grantee{Kind: domain.GranteeProject, Name: "default/ml"}})
		},
	)
	c := e.create(t, aliceToken, `{
		"name": "train-1", "image": "cr.io/pytorch:2.4", "type": "batch",
		"resources": {"cpu": "2", "mem": 4294967296, "cuda.shares": 0.5},
		"command": "python train.py", "env": {"EPOCHS": "3"}, "priority": 50,
		"cluster_size": 2, "cluster_mode": "single-node", "project": "ml", "resource_group": "gpu"}`)
	if len(c.KernelIDs) != 2 {
		t.Fatalf("kernel ids %v", c.KernelIDs)
	}
	s := e.get(t, aliceToken, c.ID, c.Position)
	if s.Name != "train-1" || s.Type != "batch" || s.Project != "ml" || len(s.Kernels) != 2 {
		t.Fatalf("session %+v", s)
	}
	if s.RequestedSlots["cuda.shares"] != "1" || s.RequestedSlots["cpu"] != "4" {
		t.Errorf("requested slots (two kernels) %v", s.RequestedSlots)
	}
}

func TestCreateSessionRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	const res = `"resources":{"cpu":1,"mem":"1g"}`
	cases := []struct {
		name, body, field string
	}{
		{"unknown field", `{"image":"localhost/busybox:latest",` + res + `,"gpus":2}`, "gpus"},
		{"env value not a string", `{"image":"localhost/busybox:latest",` + res + `,"env":{"A":1}}`, "env"},
		{"unknown slot", `{"image":"localhost/busybox:latest","resources":{"cpu":1,"mem":"1g","gpu":1}}`, "resources.gpu"},
		{"negative amount", `{"image":"localhost/busybox:latest","resources":{"cpu":-1,"mem":"1g"}}`, "resources.cpu"},
		{"negative string amount", `{"image":"localhost/busybox:latest","resources":{"cpu":1,"mem":"-1g"}}`, "resources.mem"},
		{"non-numeric amount", `{"image":"localhost/busybox:latest","resources":{"cpu":"lots","mem":"1g"}}`, "resources.cpu"},
		{"boolean amount", `{"image":"localhost/busybox:latest","resources":{"cpu":true,"mem":"1g"}}`, "resources.cpu"},
		{"too precise shares", `{"image":"localhost/busybox:latest","resources":{"cpu":1,"mem":"1g","cuda.shares":"0.001"}}`, "resources.cuda.shares"},
		{"exclusive accelerators", `{"image":"localhost/busybox:latest","resources":{"cpu":1,"mem":"1g","cuda.shares":"0.5","cuda.device":1}}`, "resources"},
		{"no resources", `{"image":"localhost/busybox:latest"}`, "resources"},
		{"no cpu", `{"image":"localhost/busybox:latest","resources":{"mem":"1g"}}`, "resources.cpu"},
		{"resources not an object", `{"image":"localhost/busybox:latest","resources":4}`, "resources"},
		{"unknown image", `{"image":"evil.io/miner:latest",` + res + `}`, "image"},
		{"no image", `{` + res + `}`, "image"},
		{"image not a string", `{"image":5,` + res + `}`, "image"},
		{"unknown type", `{"image":"localhost/busybox:latest","type":"gpu-party",` + res + `}`, "type"},
		{"batch without command", `{"image":"localhost/busybox:latest","type":"batch",` + res + `}`, "command"},
		{"priority too high", `{"image":"localhost/busybox:latest","priority":101,` + res + `}`, "priority"},
		{"priority not a number", `{"image":"localhost/busybox:latest","priority":"high",` + res + `}`, "priority"},
		{"cluster size zero", `{"image":"localhost/busybox:latest","cluster_size":0,` + res + `}`, "cluster_size"},
		{"cluster size too large", `{"image":"localhost/busybox:latest","cluster_size":1000,` + res + `}`, "cluster_size"},
		{"unknown cluster mode", `{"image":"localhost/busybox:latest","cluster_mode":"mesh",` + res + `}`, "cluster_mode"},
		{"bad name", `{"name":"-x","image":"localhost/busybox:latest",` + res + `}`, "name"},
		{"preopen port 0", `{"image":"localhost/busybox:latest","preopen_ports":[0],` + res + `}`, "preopen_ports"},
		{"preopen port too big", `{"image":"localhost/busybox:latest","preopen_ports":[8080,65536],` + res + `}`, "preopen_ports"},
		{"preopen port twice", `{"image":"localhost/busybox:latest","preopen_ports":[8080,8080],` + res + `}`, "preopen_ports"},
		{"too many preopen ports", `{"image":"localhost/busybox:latest","preopen_ports":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17],` + res + `}`, "preopen_ports"},
		{"preopen port not a number", `{"image":"localhost/busybox:latest","preopen_ports":["8080"],` + res + `}`, "preopen_ports"},
		{"malformed JSON", `{"image":`, "body"},
		{"two objects", `{"image":"localhost/busybox:latest",` + res + `} {}`, "body"},
		{"not an object", `[1,2]`, "body"},
		{"empty body", ``, "body"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(t, "POST", "/v1/sessions", aliceToken, c.body)
			if r.status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", r.status, r.body)
			}
			p := r.problem(t)
			if p.Kind != "invalid" || p.Field != c.field {
				t.Fatalf("kind %q field %q, want invalid %q: %s", p.Kind, p.Field, c.field, r.body)
			}
		})
	}
}

// Every problem the API layer finds is reported at once.
func TestCreateSessionReportsEveryProblem(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	r := e.do(t, "POST", "/v1/sessions", aliceToken,
		`{"image":"evil.io/miner:latest","resources":{"cpu":"x","mem":"1g","tpu":1}}`)
	p := r.problem(t)
	var fields []string
	for _, fe := range p.Errors {
		fields = append(fields, fe.Field)
	}
	if r.status != http.StatusBadRequest || strings.Join(fields, ",") != "resources.cpu,resources.tpu,image" {
		t.Fatalf("%d fields %v: %s", r.status, fields, r.body)
	}
}

func TestCreateSessionNeedsAWritingCaller(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	for _, c := range []struct {
		token  string
		auth   string
		status int
		kind   string
	}{
		{"", "", http.StatusUnauthorized, "unauthenticated"},
		{"wrong-token", "", http.StatusUnauthorized, "unauthenticated"},
		{"", "Basic YWxpY2U6cGFzcw==", http.StatusUnauthorized, "unauthenticated"},
		{monitorToken, "", http.StatusForbidden, "forbidden"},
	} {
		req, _ := http.NewRequest("POST", "/v1/sessions", strings.NewReader(validBody))
		switch {
		case c.auth != "":
			req.Header.Set("Authorization", c.auth)
		case c.token != "":
			req.Header.Set("Authorization", "Bearer "+e.token(c.token))
		}
		resp, err := e.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r := response{status: resp.StatusCode, header: resp.Header, body: raw}
		if r.status != c.status || r.problem(t).Kind != c.kind {
			t.Errorf("token %q auth %q: %d %s, want %d %s", c.token, c.auth, r.status, raw, c.status, c.kind)
		}
	}
}

// The body limit is enforced by the HTTP server (fasthttp) before any
// handler runs, so this test talks to a real listener.
func TestCreateSessionBodyOverTheLimitIs413(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- e.app.Listener(ln) }()
	t.Cleanup(func() {
		if err := e.app.Shutdown(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	url := "http://" + ln.Addr().String() + "/v1/sessions"
	post := func(body string) response {
		t.Helper()
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.token(aliceToken))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return response{status: resp.StatusCode, header: resp.Header, body: raw}
	}
	// Just under the limit is decoded (and refused for its content).
	env := `"env":{"PAD":"` + strings.Repeat("x", bodyLimit-200) + `"}`
	r := post(`{"image":"localhost/busybox:latest","resources":{"cpu":1,"mem":"1g"},` + env + `}`)
	if r.status != http.StatusCreated {
		t.Fatalf("body under the limit: %d %s", r.status, r.body)
	}
	env = `"env":{"PAD":"` + strings.Repeat("x", bodyLimit) + `"}`
	r = post(`{"image":"localhost/busybox:latest","resources":{"cpu":1,"mem":"1g"},` + env + `}`)
	if r.status != http.StatusRequestEntityTooLarge || r.problem(t).Kind != "too-large" {
		t.Fatalf("body over the limit: %d %s", r.status, r.body)
	}
	var p httpapi.Problem
	if err := json.Unmarshal(r.body, &p); err != nil || p.Type != "https://cairn.dev/problems/too-large" {
		t.Fatalf("problem %s: %v", r.body, err)
	}
}

// A session may pre-open ports; its kernels show the ports their agent
// published once they run, none before.
func TestCreateSessionWithPreopenPorts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c := e.create(t, aliceToken, `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g"},"preopen_ports":[8888,6006]}`)
	r := e.do(t, "GET", "/v1/sessions/"+c.ID+"?wait_for_position="+strconv.FormatUint(c.Position, 10), aliceToken, "")
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"service_ports":[]`) {
		t.Fatalf("GET: %d %s; want a kernel with service_ports []", r.status, r.body)
	}
}
