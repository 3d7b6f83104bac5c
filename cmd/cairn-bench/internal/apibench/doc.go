// Package apibench measures the HTTP API under load, for `cairn-bench api`
// (issue #4's benchmark): signed requests per second on a
// cheap authenticated GET, with their client-side p50 and p99 latency,
// and what the audit trail costs.
//
// # What runs
//
// StartServer runs the real `cairn dev` (infra/devserver) in this process,
// without a local agent, on free loopback ports, over SQLite in a
// temporary directory or a PostgreSQL schema: the store, the read models'
// projectors, the process managers, the audit sequencer under its lease,
// the access-log writer, and the API twice — once as `cairn dev` serves
// it, every /v1 request recorded in the audit trail, and once more
// without the access-log middleware, on a listener of the benchmark's own
// (devserver.Endpoints.ServeWithoutAudit: `cairn dev` never serves it).
// It provisions an ordinary user with a keypair through that API (so
// through the real commands) with the bootstrap superadmin's token.
//
// Run drives Config.Clients concurrent clients, each a goroutine of this
// process (the load generator shares the machine's cores with the
// server, as issue #4 asks), that sign every request anew, in Cairn's
// strict mode (signing.SignHTTPStrict: the server checks the body hash and
// its replay cache) unless Config.CompatSigning asks for Backend.AI's
// (signing.SignHTTP), and send it over keep-alive connections. Measured
// rounds of Config.Duration alternate between the audited and the
// unaudited API (ON OFF, OFF ON, ...) so that drift on a shared machine
// falls on both. After an audited round Run waits until the sequencer
// has sealed every record of it (read from the server's /metrics: the
// access-log writer's cairn_access_records_written_total and the
// sequencer's cairn_audit_records_sealed_total) and reports how long
// that took; it fails if a record is missing.
package apibench
