// Package node is Cairn's node agent: the process (`cairn agent`, or a
// goroutine of `cairn dev`) that runs the kernels the manager places on one
// machine as Podman containers, and reports what becomes of them. It
// speaks agents/protocol over the bus (infra/bus), runs containers through
// the runtime port (agents/runtime, Podman), and hands GPUs over as
// agents/accelerator says.
//
//	a, err := node.New(node.Config{AgentID: "gpu-07", BusURL: "nats://manager:4222",
//		BusCredentialsFile: "/etc/cairn/gpu-07.creds", DataDir: "/var/lib/cairn-agent"}, logger)
//	err = a.Run(ctx)                       // until ctx ends
//	logs, err := a.Logs(ctx, kernelID, runtime.LogOptions{Tail: 100})
//
// # What it does
//
// At start it discovers its capacity (host CPUs and memory, see
// HostCapacity; GPUs through NVML or its mocks, Config.GPUs), adopts the
// containers labelled with its id (below), sends agent.register, and then
// sends agent.heartbeat every Config.HeartbeatInterval and agent.register
// again every Config.RegisterInterval. It consumes its topic,
// cairn.agent.<id>, as the durable consumer agent-<id>:
//
//   - kernel.create: the image is pulled if absent, the container created
//     (idempotent by kernel id: runtime.Runtime.Ensure) with the kernel's
//     CPU and memory limits, environment (the request's, then
//     CAIRN_KERNEL_ID, CAIRN_SESSION_ID and CAIRN_KERNEL_ROLE, then its GPU
//     variables), devices, labels and rlimits, its service ports published
//     on 127.0.0.1 (see Apps below), and started; the agent
//     reports preparing, pulling (if it pulls, with the pull's progress,
//     throttled: see phases.go), creating, running (with the container id;
//     again, with its ready apps, each time one more of its apps answers
//     the agent's probe on its host port), and exited with the exit code
//     when the process ends. An image that cannot be had, a spec the runtime refuses, or a
//     start that fails is reported failed (failed-to-start) with the cause.
//   - kernel.destroy: the container's logs are kept, the container is
//     stopped (SIGTERM, then SIGKILL after Config.StopGrace) and removed,
//     and the kernel reported removed.
//   - kernel.sync: orphans are removed (below).
//
// Handling a command only records it and hands it to the kernel's
// supervisor, one goroutine per kernel that does everything to its
// container in order, so a slow pull never holds up other commands and a
// destroy interrupts a creation in progress. Podman or the bus being
// unavailable is retried with backoff (Config.RetryMin to RetryMax), never
// reported as the kernel's failure.
//
// # Isolation
//
// Every kernel runs with no-new-privileges, only Config.Capabilities
// (runtime.DefaultCapabilities by default), its bind mounts nosuid and
// nodev, and, under Config.UserNS private (the default), in its own user
// namespace: its ids 0 to UserNSSize-1 are host ids UserNSHostID and up,
// so its root is an unprivileged id on the host. Before creating such a
// kernel's container, the agent gives the mapping's root every entry of
// its read-write mounts that no mapped id owns (see claimMounts). At start
// it refuses to run when the host cannot give user namespaces (disabled in
// the kernel, a rootless Podman service); Config.UserNS host shares the
// host's namespace instead, with a warning.
//
// # Idempotence and the data directory
//
// Commands arrive at least once and a redelivery may come after a later
// command. The agent keeps a record per kernel in <DataDir>/kernels (one
// JSON file, written atomically) whose state only moves forward: pending
// (a kernel.create accepted), started, failed, destroying (a destroy
// accepted), removed. A record is written before its command is
// acknowledged, so a restarted agent finishes what it accepted. Hence:
// a kernel.create for a kernel the agent looks after creates nothing and
// repeats the kernel's last report; one for a kernel that failed or was
// removed creates nothing and repeats the final report; a kernel that
// exited is never started again (runtime Start is a no-op on it). Records and logs of finished kernels are kept for
// Config.RecordTTL (8 days, longer than the bus keeps commands) in
// <DataDir>/kernels and <DataDir>/logs.
//
// # Restart and adoption
//
// Stopping the agent (its context ending, SIGTERM for `cairn agent`)
// never stops a kernel. At start, the agent lists the containers labelled
// cairn.agent=<its id> and adopts them: a running container is watched
// again and reported running again (same container id; the manager treats
// it as no news), an exited one has its exit reported, one whose kernel
// has a destroy pending is removed, one created but never started whose
// kernel.create is pending is started. It never removes a container just
// because it has no record of it: records can be lost, labels are the
// truth.
//
// # Orphans
//
// A container whose kernel no allocation holds any more (its session was
// failed while the agent was away, say) must go, but the agent cannot tell
// that alone. The manager answers every agent.register with a kernel.sync
// listing the kernels allocated on the agent and the revision of the
// agent's stream that list reflects (AsOfRevision). The agent removes, and
// reports removed, each kernel it looks after that the list does not name
// and whose allocation revision (kept on its container as the label
// LabelAllocationRevision, from KernelCreate.AllocationRevision) is at
// most AsOfRevision; a kernel allocated after the list was read is kept.
// A container without that label counts as allocated at revision -1. Until
// a kernel.sync comes, nothing found at start is removed: leaking a
// container is preferred to killing a kernel.
//
// # Identity
//
// The agent connects to the bus with its own credentials
// (Config.BusCredentialsFile, issued by the manager's keys: see package
// busauth), which allow it only an agent's work for itself. It keeps in
// its data directory the key its messages are sealed to (seal.nk, made at
// first start, announced in agent.register) and opens only sealed
// messages. Its HTTP endpoint answers /kernels/ only to requests the
// manager signed with the key that issued those credentials.
//
// # Apps
//
// A kernel.create lists the kernel's service ports (its image's and its
// session's pre-opened ones). Before creating the container, the agent
// gives each a host port of its own from Config.AppPortRange (skipping
// ports something else on the host holds) and makes the kernel an app
// token, both kept in the kernel's record; the container gets the ports
// published on 127.0.0.1 only and the token as CAIRN_APP_TOKEN. The
// running report lists the ports; a restarted agent keeps them; they are
// freed when the container is removed. Handler forwards the manager's
// signed requests to them (/kernels/{id}/apps/{port}/...), adding the app
// token, and tunnels raw TCP (/kernels/{id}/ports/{port}/tunnel), answering
// the app token on the tunnel's upgrade when asked: the app proxy speaks
// HTTP to the app through such tunnels, one signed upgrade per connection.
//
// # Logs
//
// Logs returns a kernel's output while its container exists and, once it
// is removed, the last Config.LogArchiveBytes the agent kept. `cairn dev`
// calls it in process; for remote agents, Handler serves it over HTTP on
// Config.Listen as GET /kernels/{kernel id}/logs?tail=N&max_bytes=N, and
// agent.register carries the base URL (Config.Advertise) the manager
// fetches it from. StreamLogs writes a byte range of the log (one byte
// sequence, see runtime.LogRange), following it while the kernel runs;
// the endpoint serves it for ?offset=N&limit=N&follow=true. The archive
// keeps, with a removed kernel's last bytes, the offset of the first, so
// ranges read from it name the same bytes they did in the container.
//
// # Terminals
//
// Handler also serves terminals: a shell (bash -l where the image has
// it, else sh) in a running kernel, one runtime exec with a TTY per
// terminal, named by the kernel and an id its client chooses. The agent
// keeps each one alive without a client, with its latest output, so a
// browser that lost its connection attaches again to the same shell; see
// Handler for the protocol and Config's Terminal fields for the limits.
// A kernel's terminals end before its container is removed, and every
// terminal ends when the agent stops (an exec cannot be attached again).
// TerminalActivity tells idle rules when a kernel's terminals were last
// used.
//
// # Use
//
// Every Config.ActivityInterval (30 s) the agent looks for use inside its
// running kernels: a busy or newly active kernel of a kernel's Jupyter
// (its http app named jupyter, asked GET {base_url}api/kernels on the
// loopback host port with the app token), terminal input or output since
// the last look, and GPUs whose NVML utilisation, averaged over
// Config.GPUIdleWindow, reaches Config.GPUIdleThreshold percent. It sends
// one kernel.activity per session that showed any, naming the signals:
// what keeps the session from idling out (the manager records it as use).
package node
