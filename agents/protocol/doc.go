// Package protocol is the wire contract between the manager and its node
// agents: the JSON messages they exchange over the bus (infra/bus), how
// they are encoded in watermill messages, and what each side must do with
// them. It imports nothing of Cairn's but domain, so the manager's process
// managers (commands) can use it as well as the agent (agents/node).
//
// # Topics and who speaks
//
//	topic                    producer              consumer (durable)                 messages
//	cairn.agent.<agent id>   manager (forwarder,   the agent (agent-<agent id>)       kernel.create, kernel.destroy,
//	  (bus.AgentTopic)         report consumer)                                         kernel.sync
//	cairn.reports.<agent id> that agent only       the manager (one durable over      agent.register, agent.heartbeat,
//	  (bus.ReportTopic)                              cairn.reports.*, shared by         kernel.status, kernel.activity
//	                                                 server replicas)
//
// # Encoding
//
// A message's payload is a JSON object
//
//	{"type": "kernel.status", "version": 1, "data": {...}}
//
// where data is the message struct as JSON (field names below). Its
// metadata repeats the type (Cairn-Type, the key bus.MetaType names, so
// the bus logs it), the version (Cairn-Version), the agent id
// (Cairn-Agent) and, for messages about one kernel, the kernel id
// (Cairn-Kernel): a consumer may route on them without decoding; the
// payload is authoritative. Types and versions are stable: fields are only
// ever added (a decoder ignores fields it does not know), and an
// incompatible change would get a new version. Decode refuses a message
// that does not decode or validate; such a message never will, so a
// handler returns bus.Permanent(err).
//
// Message ids (the watermill UUID, sent as Nats-Msg-Id) let consumers and
// JetStream drop duplicates. NewMessage gives a fresh UUIDv7 (what the
// agent does for its reports; it republishes the same message, same id,
// when a publish has to be retried). Messages derived from an event reuse
// the event's id, or DerivedID(event id, name) when one event yields
// several messages, so that a forwarder that republishes after a crash
// produces the same ids.
//
// # Sealing
//
// Every message to an agent is sealed to the key the agent announced in
// agent.register (SealKey; Seal, Open): the payload is a NaCl box only that
// agent opens, marked by the metadata MetaSealed, so that what the bus
// keeps of a kernel's environment, command and mounts is unreadable to
// anyone else. An agent accepts only sealed messages. Who sent a message
// is what the bus's permissions guarantee, not the box (its sender key is
// made for each message).
//
// # Agent → manager (cairn.reports.<agent id>)
//
// A report counts only for the agent whose reports topic it arrived on
// (bus.ReportSender); one that speaks for another agent is dropped.
//
// agent.register (AgentRegister): sent when the agent starts and every
// register interval after (5 minutes by default). The manager runs
// commands.RegisterAgent{Spec: m.Spec()} (idempotent: the same spec again
// appends nothing; it rejoins a lost agent and reconnects a disconnected
// one), creates the agent's consumer of its topic
// (bus.EnsureAgentConsumer), then answers with a kernel.sync on the
// agent's topic (see below). Address is where the agent serves
// kernel logs (GET {address}/kernels/{kernel id}/logs, answered only to
// requests the manager signed), empty if it serves none. SealKey is the
// agent's public curve key that messages to it are sealed to.
//
// agent.heartbeat (AgentHeartbeat): every heartbeat interval (10 s by
// default; Interval carries it). Running lists the kernels whose
// containers run. The manager's liveness check declares the agent
// disconnected (commands.DisconnectAgent: its sessions DISCONNECTED, its
// allocations kept, nothing destroyed) when no message came for its
// heartbeat timeout, and lost (commands.MarkAgentLost) only after the much
// longer lost timeout. A heartbeat from a disconnected agent brings it back
// (commands.ReconnectAgent): each of its sessions whose kernel is in
// Running returns to its phase; a kernel.status about a kernel of a
// disconnected session does the same for that session.
//
// kernel.status (KernelStatus): a kernel's progress and end, mapped one to
// one onto commands.ReportKernelStatus{SessionID, KernelID, AgentID, Phase,
// ContainerID, ExitCode, Reason, Message, ServicePorts}. The agent sends, per
// kernel: preparing, pulling (only when the image must be pulled), creating,
// running (with the container id and the ports it published), then exited (with the exit code) when
// the process ends on its own, removed when the container is gone, or
// failed (Reason failed-to-start, Message the cause) when it cannot be
// created or started. Reports come at least once and may be repeated (a
// restarted agent reports every kernel it adopts again); the domain treats
// a repeated or stale report as no news. A report about a kernel or
// session the manager does not know (domain.ErrNotFound) or that conflicts
// (domain.ErrConflict, e.g. from an agent that no longer owns the kernel)
// will never apply: the consumer drops it rather than retrying; except a
// report about a session still PENDING, which only means the report
// overtook session.scheduled, and is retried.
//
// kernel.activity (KernelActivity): a session's kernel showed use since the
// agent's last look (every 30 s by default): Signals lists which of
// notebook (a Jupyter kernel busy or active), terminal (terminal input or
// output) and gpu (the kernel's GPUs at or above a utilisation threshold
// over a window). At most one per session per look, and none without a
// signal. The manager writes one audit record per signal about the
// session (action "kernel.activity <signal>"), which the session-limits
// manager counts as use; a report about a kernel the session does not run
// on that agent is dropped. Best effort: a lost one is not resent.
//
// # Manager → agent (cairn.agent.<agent id>)
//
// kernel.create (KernelCreate): published by the forwarder for every
// agent.allocated event, built with NewKernelCreate from the event, its
// stream revision in agent-<agent id>, and the session's session.requested
// event (plus the service ports of the session's image, which the forwarder
// reads from the image's stream); message id = the agent.allocated event
// id. Self-contained: the agent needs nothing else to run the kernel. Creating is idempotent by
// kernel id: a repeated kernel.create never makes a second container nor
// re-runs a kernel that exited; it is answered by repeating the kernel's
// last report (its final one, removed or failed, for a kernel the agent
// already destroyed or could not start).
//
// kernel.destroy (KernelDestroy): the kernel's container must go (its logs
// are kept by the agent). Published, built with NewKernelDestroy,
//   - for every kernel of a session on session.terminating and on
//     session.errored (to each kernel's agent; message id
//     DerivedID(event id, kernel id)); the agent stops and removes the
//     container and reports removed, which lets the session terminate;
//   - on agent.released (message id = the event id), for kernels that
//     ended by themselves (exited, failed): their container is cleaned up.
//
// Destroying is idempotent; a destroy for a kernel the agent never saw
// reports removed, and a kernel.create that comes after it (a redelivery)
// creates nothing.
//
// kernel.sync (KernelSync): the manager's answer to agent.register: the
// kernels it believes are allocated on the agent (domain.Agent.Allocations)
// and AsOfRevision, the revision of the agent's stream that list was read
// at (domain.Agent.Revision); message id DerivedID(register message id,
// TypeKernelSync). The agent removes, and reports removed, every container
// (and cancels every pending creation) of a kernel that is not in the list
// and whose KernelCreate.AllocationRevision is at most AsOfRevision: an
// orphan, whose allocation the manager has already released (for instance
// when it gave the agent up as lost). A merely disconnected agent keeps its
// allocations, so the list still names its kernels and nothing is removed. A kernel allocated after the list was read
// has a higher allocation revision and is kept, so a kernel.create that
// overtakes the sync is never mistaken for an orphan. Kernels in the list
// that the agent runs, or already removed, are reported again. Without a
// kernel.sync the agent removes nothing it finds at start: it prefers
// leaking a container to killing a kernel.
package protocol
