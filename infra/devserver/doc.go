// Package devserver assembles `cairn dev`: every part of Cairn in one
// process, on the embedded defaults. Config says where things live and
// listen; Run starts the parts, serves until its context ends (or a part
// fails), then stops them and returns.
//
// # What runs
//
//   - the event store, chosen by DSN (SQLite in the data directory by
//     default), with the read models in the same database;
//   - an embedded NATS JetStream server (infra/bus/natsembed) carrying the
//     message bus, on Config.NATSListen, so that `cairn agent --bus
//     nats://<host>:<port>` on another machine can join (with credentials
//     from `cairn agent enroll`), and the follower of revoked agent keys
//     (infra/bus/busrevoke), which it waits for before going on;
//   - the projectors of the read models, each under the maintenance
//     service (infra/maintenance), which can hold one while a rebuild
//     swaps its rows, and which describes the server (GET /v1/system);
//   - the manager's process managers: the scheduler, the session limits
//     (idle timeout and lifetime, commands/sessionlimits), the forwarder
//     (events → agents' topics, checkpoint in the data directory), the
//     reports consumer (agents' reports → commands, liveness) and the
//     address book of remote agents' logs endpoints (infra/agentlogs);
//   - one local agent (agents/node, Podman) unless Config.NoAgent;
//   - the HTTP API (fiber: infra/commandapi's and readapi's routes, /healthz, /metrics) with the
//     bootstrap superadmin's bearer token (infra/bootstrap), which also
//     registers the images: the localhost/cairn/* images the local
//     agent's Podman has, with their labels (their service ports), then
//     the base image and --image; on a listener
//     (httpapi.NewListener) that refuses connections over Config's limits
//     and retries failed accepts: running out of file descriptors (EMFILE)
//     slows the API down, it does not stop the server.
//
// # Order
//
// Parts start in this order, each once the previous one is up: store and
// read-model database, NATS, bus, projectors (Run waits until they have
// caught up with the log, so the first answers are not stale), scheduler,
// forwarder, reports consumer, address book, local agent, HTTP. They stop
// in the reverse order: HTTP first (no new requests), then the agent
// (which leaves every container running: the next start adopts them),
// then the process managers and projectors, the bus, NATS, and the store
// last. A part that stops on its own before it is asked to — the agent
// cannot reach Podman, say — stops the whole server, and Run returns why.
//
// # A full data disk
//
// A full disk degrades the server and never stops it: writes answer 503
// (the data disk is full) while reads work, the parts that write wait it
// out and resume once there is room, and a start on a full disk serves
// read-only (docs/architecture.md, "A full data disk"). /healthz says
// "degraded" and names the parts, with the data directory's free bytes;
// the gauges cairn_degraded{part} and cairn_data_dir_free_bytes show the
// same. Config.AuditQueue bounds the access records answered and not yet
// stored: once it is full, requests are answered 503 rather than answered
// without a record.
package devserver
