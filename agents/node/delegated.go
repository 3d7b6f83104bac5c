package node

import "net/http"

// proxyRoutes are the Handler's patterns an app proxy's own key (granted
// by the account key, busauth.IssueAppProxyKey) may call: a kernel's apps
// (through a tunnel to a published port, or the per-request app route) and
// its terminals, which is all a proxy forwards. The logs and the
// terminals' list stay the manager's.
var proxyRoutes = map[string]bool{
	"/kernels/{id}/apps/{port}/{rest...}":    true,
	"GET /kernels/{id}/ports/{port}/tunnel":  true,
	"GET /kernels/{id}/terminals/{terminal}": true,
}

// proxyMayCall is busauth.RequestVerifier.Delegated for this agent: the
// route the mux matched (r.Pattern), not the raw path, so no spelling of
// a path reaches another handler.
func proxyMayCall(r *http.Request) bool { return proxyRoutes[r.Pattern] }
