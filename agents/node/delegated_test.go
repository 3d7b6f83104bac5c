package node

import (
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/bus/busauth"
)

// An app proxy's own key reaches a kernel's apps and terminals, and
// nothing else of the agent's endpoint.
func TestAppProxyKeyReachesAppsOnly(t *testing.T) {
	w := newAppWorld(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(rw, "app")
	}))
	w.agent.verifier.Delegated = proxyMayCall
	raw, err := w.keys.IssueAppProxyKey(time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "proxy.key")
	if err := busauth.WriteSecretFile(path, raw); err != nil {
		t.Fatal(err)
	}
	key, _, err := busauth.LoadAppProxyKey(path)
	if err != nil {
		t.Fatal(err)
	}
	get := func(u string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if err := key.SignAgentRequest(req, "apps-test", time.Now()); err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := get(w.url(testContainerApp, "/")); got != http.StatusOK {
		t.Errorf("an app signed by the proxy's key: %d, want 200", got)
	}
	// Past the signature check: the terminal route answers for itself
	// (426 without the WebSocket upgrade), not 401.
	if got := get(w.server.URL + "/kernels/" + w.kernel.String() + "/terminals/" + w.kernel.String()); got == http.StatusUnauthorized {
		t.Errorf("a terminal signed by the proxy's key: %d, want past authentication", got)
	}
	// Past the signature check: the tunnel answers for itself (400
	// without its upgrade), not 401.
	if got := get(w.server.URL + "/kernels/" + w.kernel.String() + "/ports/1/tunnel"); got == http.StatusUnauthorized {
		t.Errorf("a tunnel signed by the proxy's key: %d, want past authentication", got)
	}
	for _, p := range []string{"/logs", "/terminals"} {
		if got := get(w.server.URL + "/kernels/" + w.kernel.String() + p); got != http.StatusUnauthorized {
			t.Errorf("%s signed by the proxy's key: %d, want 401", p, got)
		}
	}
}
