// Package webuibench measures the Web-UI over a large store, for
// `cairn-bench webui` (issue #19's benchmark): how long the first page of
// Sessions and of Data takes in a real browser with 100,000 sessions and
// 10,000 folders in the store, how many API requests and read-model
// queries a page load costs (the same whatever the store's size), and how
// long a change takes from its create's answer to the Sessions page over
// the live stream (GET /v1/events).
//
// # What runs
//
// StartServer runs the real `cairn dev` (infra/devserver) in this process,
// without a local agent (the sessions stay PENDING, as a long queue does),
// on free loopback ports, over SQLite in a temporary directory or a
// PostgreSQL schema. Seed provisions a handful of users across two domains
// and their projects through the API and then creates sessions and folders
// through the API (POST /v1/sessions, POST /v1/vfolders) from parallel
// clients, so every object is made by the real command handlers and every
// read model is built by the real projectors from the log; it waits until
// the read models show the last write. Run seeds the store up to each size
// in turn (a small baseline first, then the full size, in one server) and
// runs the browser part at each: web/ui/bench/webui.bench.mjs, Node
// driving Debian's Chromium through playwright-core (infra/browsertest
// finds them), which prints its samples as JSON.
//
// The read-model queries are counted by the server itself: the
// read-model database counts its reads (projections.DB.Reads), exported as
// cairn_readmodel_queries_total on /metrics, read before and after each
// page load.
package webuibench
