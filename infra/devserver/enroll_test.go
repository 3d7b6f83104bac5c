package devserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cairnhq/cairn/agents/enroll"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/bus"
)

// offer asks for an enrollment token for agentID as the caller of token.
func (r *running) offer(t *testing.T, token, agentID, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", r.creds.APIURL+"/v1/agents/"+agentID+"/enrollment", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Token string `json:"token"`
	}
	if resp.StatusCode == http.StatusCreated {
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, out.Token
}

// enrollAs enrolls agentID with tok into a fresh data directory.
func (r *running) enrollAs(t *testing.T, agentID, tok string) (enroll.Result, error) {
	t.Helper()
	return enroll.Run(t.Context(), enroll.Config{API: r.creds.APIURL, AgentID: agentID, Token: tok, DataDir: t.TempDir()})
}

// busConn is a raw NATS connection with creds, recording permission
// violations and its closing.
type busConn struct {
	nc     *nats.Conn
	mu     sync.Mutex
	errs   []error
	closed chan struct{}
}

func dialBus(t *testing.T, url, creds string) (*busConn, error) {
	t.Helper()
	c := &busConn{closed: make(chan struct{})}
	nc, err := nats.Connect(url, nats.UserCredentials(creds), nats.MaxReconnects(0),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			c.mu.Lock()
			c.errs = append(c.errs, err)
			c.mu.Unlock()
		}),
		nats.ClosedHandler(func(*nats.Conn) { close(c.closed) }))
	if err != nil {
		return nil, err
	}
	c.nc = nc
	t.Cleanup(nc.Close)
	return c, nil
}

// violated waits for a permission violation naming subject.
func (c *busConn) violated(t *testing.T, subject string) {
	t.Helper()
	defer func() {
		if t.Failed() {
			c.mu.Lock()
			defer c.mu.Unlock()
			t.Logf("errors: %v", c.errs)
		}
	}()
	await.Until(t, 10*time.Second, fmt.Sprintf("a permission violation for %q", subject), func() bool {
		if err := c.nc.Flush(); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, err := range c.errs {
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+subject+`"`) {
				return true
			}
		}
		return false
	})
}

// TestAgentEnrollment: a superadmin offers a token, the agent enrolls its
// own key over the real HTTP API, and its credentials connect to the
// embedded bus as that agent only; the token works once; an expired one
// and a non-superadmin's offer are refused; revoking closes the agent's
// connection and keeps it out, also after a restart; re-enrolling revokes
// the old key.
func TestAgentEnrollment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var skew atomic.Int64 // how far the server's clock runs ahead
	cfg := testConfig(dir)
	cfg.Clock = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	r := start(t, cfg)
	admin := r.creds.Token

	code, tok := r.offer(t, admin, "gpu-1", "")
	if code != http.StatusCreated || !strings.HasPrefix(tok, "cairn_e_") {
		t.Fatalf("offer: %d %q", code, tok)
	}
	first, err := r.enrollAs(t, "gpu-1", tok)
	if err != nil {
		t.Fatal(err)
	}
	if first.CAPath != "" {
		t.Fatalf("a CA for a loopback bus: %q", first.CAPath)
	}

	// The credentials are gpu-1's: its reports topic works, gpu-2's not.
	agent, err := dialBus(t, r.endpoints.BusURL, first.CredentialsPath)
	if err != nil {
		t.Fatalf("enrolled credentials: %v", err)
	}
	own, _ := bus.ReportTopic("gpu-1")
	other, _ := bus.ReportTopic("gpu-2")
	if err := agent.nc.Publish(own, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := agent.nc.Publish(other, []byte("forged")); err != nil {
		t.Fatal(err)
	}
	agent.violated(t, other)
	agent.mu.Lock()
	for _, err := range agent.errs {
		if strings.Contains(err.Error(), `"`+own+`"`) {
			t.Errorf("publishing on its own topic: %v", err)
		}
	}
	agent.mu.Unlock()

	// The token a second time: refused.
	if _, err := r.enrollAs(t, "gpu-1", tok); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Fatalf("second use: %v", err)
	}
	// An expired token: refused alike.
	code, short := r.offer(t, admin, "gpu-9", `{"ttl_seconds":60}`)
	if code != http.StatusCreated {
		t.Fatalf("offer: %d", code)
	}
	skew.Store(int64(2 * time.Minute))
	if _, err := r.enrollAs(t, "gpu-9", short); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Fatalf("expired token: %v", err)
	}

	// A non-superadmin may not offer.
	if code, _ := r.offer(t, r.userToken(t), "gpu-5", ""); code != http.StatusForbidden {
		t.Fatalf("a user offering: %d", code)
	}

	// Re-enrolling: the new key works, the old one is disconnected and
	// refused.
	_, tok2 := r.offer(t, admin, "gpu-1", "")
	second, err := r.enrollAs(t, "gpu-1", tok2)
	if err != nil {
		t.Fatal(err)
	}
	awaitClosed(t, agent, "the replaced key")
	if _, err := dialBus(t, r.endpoints.BusURL, first.CredentialsPath); err == nil {
		t.Fatal("the replaced key connected again")
	}
	agent2, err := dialBus(t, r.endpoints.BusURL, second.CredentialsPath)
	if err != nil {
		t.Fatalf("the new key: %v", err)
	}

	// Revoking: the connection closes, no reconnection, not after a
	// restart either.
	status, _, body := r.do(t, "DELETE", "/v1/agents/gpu-1/enrollment", nil)
	if status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", status, body)
	}
	awaitClosed(t, agent2, "the revoked key")
	if _, err := dialBus(t, r.endpoints.BusURL, second.CredentialsPath); err == nil {
		t.Fatal("the revoked key connected again")
	}
	r.stop(t)
	r = start(t, cfg)
	if _, err := dialBus(t, r.endpoints.BusURL, second.CredentialsPath); err == nil {
		t.Fatal("the revoked key connected after a restart")
	}
	if _, err := dialBus(t, r.endpoints.BusURL, first.CredentialsPath); err == nil {
		t.Fatal("the replaced key connected after a restart")
	}
}

// userToken creates a user (role user) and returns its login token.
func (r *running) userToken(t *testing.T) string {
	t.Helper()
	status, _, body := r.do(t, "POST", "/v1/users", strings.NewReader(`{"email":"bob@example.com","password":"correct horse battery"}`))
	if status != http.StatusCreated {
		t.Fatalf("create user: %d %s", status, body)
	}
	// The login reads the users' read model, which may not have the new
	// user yet: try again until it has, within a deadline.
	var out struct {
		Token string `json:"token"`
	}
	await.Until(t, 30*time.Second, "a login as bob", func() bool {
		resp, err := http.Post(r.creds.APIURL+"/v1/auth/login", "application/json",
			strings.NewReader(`{"email":"bob@example.com","password":"correct horse battery"}`))
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err == nil && resp.StatusCode == http.StatusOK {
			return true
		}
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("login: %d %v", resp.StatusCode, err)
		}
		return false
	})
	return out.Token
}

func awaitClosed(t *testing.T, c *busConn, what string) {
	t.Helper()
	select {
	case <-c.closed:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s is still connected", what)
	}
}
