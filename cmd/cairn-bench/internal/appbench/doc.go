// Package appbench measures the app proxy (infra/appproxy), for
// `cairn-bench apps` (issue #15's benchmark).
//
// # What runs
//
// StartServer runs the real `cairn dev` (infra/devserver) in this process,
// with its local agent on Podman, its app proxy and the agent's signed
// endpoint on free loopback ports, over SQLite in a temporary directory.
// Deploy builds the echo app (infra/apptest: a small answer, a 1 MiB
// answer and a WebSocket echo), uploads it into a virtual folder, and
// starts it in a session of the busybox base image on a pre-opened port;
// it opens the app as a browser does (the ticket traded for the app
// cookie) and reads the port's host port from GET /v1/sessions/{id}
// (service_ports.host_port: the agent's loopback port).
//
// Run then measures, in rounds that alternate between the two ways in
// (proxy first, then direct first, ...) so that drift on a shared machine
// falls on both:
//
//   - HTTP: Config.Clients concurrent keep-alive clients (goroutines of
//     this process: the load generator shares the cores) GET the small and
//     the 1 MiB answer through the proxy (browser -> proxy -> agent ->
//     container) and straight from the host port, for Config.Duration per
//     round: requests/s, p50 and p99; the target is proxy/direct >= 0.7;
//   - WebSocket: one client sends a small message and reads its echo,
//     Config.Messages times per round, through the proxy and directly:
//     p50 and p99 round trip; the target is an added p99 <= 2 ms;
//   - Jupyter: the time from POST /v1/sessions of the python image to
//     the first 200 of the notebook's /api/status through the proxy; then
//     the HTTP measurement above of one of the notebook's static files
//     (JupyterStaticPath, which Jupyter serves without its token) through
//     the proxy and straight to the jupyter port's host port under the
//     same base path. The echo app costs almost nothing per request, the
//     proxy's worst case; Jupyter is the real app users run (JupyterResult
//     says why when it was not measured).
package appbench
