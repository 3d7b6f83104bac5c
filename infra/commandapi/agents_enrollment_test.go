package commandapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/cairnhq/cairn/infra/bus/busauth"
	"github.com/cairnhq/cairn/infra/commandapi"
)

var _ commandapi.BusSigner = busauth.Signer{}

// busSigner signs with fresh bus keys (no TLS).
func busSigner(t testing.TB) busauth.Signer {
	t.Helper()
	keys, err := busauth.LoadOrCreateKeys(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return busauth.Signer{Keys: keys}
}

// enrollKey is a fresh public NATS user key.
func enrollKey(t testing.TB) string {
	t.Helper()
	u, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := u.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

func offerEnrollment(t *testing.T, e *env, agentID, body string) string {
	t.Helper()
	res := e.do(t, "POST", "/v1/agents/"+agentID+"/enrollment", adminToken, body)
	if res.status != http.StatusCreated {
		t.Fatalf("offer: %d %s", res.status, res.body)
	}
	var out struct {
		AgentID   string    `json:"agent_id"`
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.Unmarshal(res.body, &out); err != nil || out.AgentID != agentID || len(out.Token) != 51 {
		t.Fatalf("offer answer %s (%v)", res.body, err)
	}
	return out.Token
}

func enrollBody(agentID, tok, key string) string {
	b, _ := json.Marshal(map[string]string{"agent_id": agentID, "token": tok, "user_key": key})
	return string(b)
}

func TestAgentEnrollmentOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{accessLog: true})
	tok := offerEnrollment(t, e, "gpu-1", "")
	first := tok
	key := enrollKey(t)

	// A malformed key is 400 naming user_key, and spends nothing.
	res := e.do(t, "POST", "/v1/agent-enrollments", "", enrollBody("gpu-1", tok, "UNOTAKEY"))
	if res.status != http.StatusBadRequest || res.problem(t).Field != "user_key" {
		t.Fatalf("bad key: %d %s", res.status, res.body)
	}
	// Another agent's id with this token: the refusal.
	res = e.do(t, "POST", "/v1/agent-enrollments", "", enrollBody("gpu-2", tok, key))
	if res.status != http.StatusUnauthorized {
		t.Fatalf("other agent: %d %s", res.status, res.body)
	}
	refusal := res.problem(t)

	res = e.do(t, "POST", "/v1/agent-enrollments", "", enrollBody("gpu-1", tok, key))
	if res.status != http.StatusCreated {
		t.Fatalf("enroll: %d %s", res.status, res.body)
	}
	var out commandapi.EnrollResponse
	if err := json.Unmarshal(res.body, &out); err != nil {
		t.Fatal(err)
	}
	claims, err := jwt.DecodeUserClaims(out.JWT)
	if err != nil || claims.Subject != key || claims.Issuer != out.AccountKey || out.BusCAPEM != "" {
		t.Fatalf("answer %+v, claims %+v (%v)", out, claims, err)
	}

	// The same token again, even with another key: the same 401.
	res = e.do(t, "POST", "/v1/agent-enrollments", "", enrollBody("gpu-1", tok, enrollKey(t)))
	if res.status != http.StatusUnauthorized || res.problem(t).Detail != refusal.Detail {
		t.Fatalf("second use: %d %s", res.status, res.body)
	}

	// An expired token: the same 401.
	tok = offerEnrollment(t, e, "gpu-3", `{"ttl_seconds":60}`)
	e.clock.Advance(61 * time.Second)
	res = e.do(t, "POST", "/v1/agent-enrollments", "", enrollBody("gpu-3", tok, enrollKey(t)))
	if res.status != http.StatusUnauthorized || res.problem(t).Detail != refusal.Detail {
		t.Fatalf("expired: %d %s", res.status, res.body)
	}

	// Lifetimes out of bounds, naming the field.
	for _, body := range []string{`{"ttl_seconds":59}`, `{"ttl_seconds":604801}`} {
		res = e.do(t, "POST", "/v1/agents/gpu-4/enrollment", adminToken, body)
		if res.status != http.StatusBadRequest || res.problem(t).Field != "ttl_seconds" {
			t.Fatalf("%s: %d %s", body, res.status, res.body)
		}
	}
	// Only superadmins offer; revoking with nothing to revoke is 404.
	if res = e.do(t, "POST", "/v1/agents/gpu-4/enrollment", "dadmin", ""); res.status != http.StatusForbidden {
		t.Fatalf("admin offering: %d %s", res.status, res.body)
	}
	if res = e.do(t, "DELETE", "/v1/agents/gpu-4/enrollment", adminToken, ""); res.status != http.StatusNotFound {
		t.Fatalf("revoking nothing: %d %s", res.status, res.body)
	}
	if res = e.do(t, "DELETE", "/v1/agents/gpu-1/enrollment", adminToken, ""); res.status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", res.status, res.body)
	}

	// The enrollment went through the access log like every /v1 request,
	// and no token was stored anywhere (events or their metadata).
	all, err := e.store.ReadAll(t.Context(), 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	logged := false
	for _, ev := range all {
		raw, _ := json.Marshal(ev)
		if bytes.Contains(raw, []byte(tok)) || bytes.Contains(raw, []byte(first)) {
			t.Fatalf("a token is stored in %s at %d", ev.Type, ev.Position)
		}
		logged = logged || bytes.Contains(raw, []byte("POST /v1/agent-enrollments"))
	}
	if !logged {
		t.Fatal("no access record of POST /v1/agent-enrollments")
	}
}
