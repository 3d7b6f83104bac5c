package busauth_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus/busauth"
)

// An app proxy's own key, granted by the account key, signs requests an
// agent accepts on the routes it delegates, and nowhere else, and only
// until the grant ends.
func TestAppProxyKey(t *testing.T) {
	dir := t.TempDir()
	keys, err := busauth.LoadOrCreateKeys(filepath.Join(dir, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := busauth.LoadOrCreateKeys(filepath.Join(dir, "other"))
	if err != nil {
		t.Fatal(err)
	}
	issuer, _ := keys.Account.PublicKey()
	now := time.Now()
	load := func(k *busauth.Keys, expires time.Time) *busauth.AppProxyKey {
		t.Helper()
		raw, err := k.IssueAppProxyKey(expires)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "proxy.key")
		if err := busauth.WriteSecretFile(path, raw); err != nil {
			t.Fatal(err)
		}
		p, exp, err := busauth.LoadAppProxyKey(path)
		if err != nil || exp.Unix() != expires.Unix() {
			t.Fatalf("load: %v, expires %s", err, exp)
		}
		return p
	}
	good := load(keys, now.Add(time.Hour))
	apps := func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/apps/") }
	v := busauth.RequestVerifier{AgentID: "a1", Issuer: issuer, Delegated: apps, Clock: func() time.Time { return now }}
	signed := func(p *busauth.AppProxyKey, agent, path string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, "http://agent"+path, nil)
		if err := p.SignAgentRequest(r, agent, now); err != nil {
			t.Fatal(err)
		}
		return r
	}
	const app = "/kernels/k/apps/8080/x?y=1"
	if err := v.Verify(signed(good, "a1", app)); err != nil {
		t.Fatalf("a granted key on an app route: %v", err)
	}
	for name, tc := range map[string]struct {
		v busauth.RequestVerifier
		r *http.Request
	}{
		"a route not delegated":        {v, signed(good, "a1", "/kernels/k/logs")},
		"an agent that delegates none": {busauth.RequestVerifier{AgentID: "a1", Issuer: issuer, Clock: v.Clock}, signed(good, "a1", app)},
		"another agent's request":      {v, signed(good, "a2", app)},
		"a grant of another account":   {v, signed(load(other, now.Add(time.Hour)), "a1", app)},
		"an expired grant":             {v, signed(load(keys, now.Add(-time.Second)), "a1", app)},
	} {
		if err := tc.v.Verify(tc.r); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Errorf("%s: %v, want unauthenticated", name, err)
		}
	}
	// The grant cannot be moved to another key: a request signed by the
	// account's key itself but carrying the grant is checked against the
	// granted key, and fails.
	r := signed(good, "a1", app)
	r2, _ := http.NewRequest(http.MethodGet, "http://agent"+app, nil)
	if err := keys.SignAgentRequest(r2, "a1", now); err != nil {
		t.Fatal(err)
	}
	grant := r.Header.Get(busauth.ManagerSignatureHeader)
	grant = grant[strings.Index(grant, ",grant="):]
	r2.Header.Set(busauth.ManagerSignatureHeader, r2.Header.Get(busauth.ManagerSignatureHeader)+grant)
	if err := v.Verify(r2); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Errorf("another key's signature with the grant: %v, want unauthenticated", err)
	}
	// The key file is a secret.
	path := filepath.Join(t.TempDir(), "open.key")
	raw, _ := keys.IssueAppProxyKey(now.Add(time.Hour))
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := busauth.LoadAppProxyKey(path); err == nil {
		t.Error("a key file others may read was loaded")
	}
}
