// Package reports is the manager's consumer of what agents report on the
// bus (agents/protocol, topic bus.ReportsTopic, one durable consumer shared
// by the server replicas), and its agent liveness check:
//
//	agent.register  → commands.RegisterAgent (idempotent; rejoins a lost
//	                  agent, reconnects a disconnected one), creates the agent's consumer of its topic (the
//	                  agent may only bind to it), then a kernel.sync on the
//	                  agent's topic listing
//	                  the kernels allocated on it and the agent stream's
//	                  revision that list was read at
//	agent.heartbeat → the agent is alive; from a disconnected agent,
//	                  commands.ReconnectAgent with the kernels it runs
//	kernel.status   → commands.ReportKernelStatus
//	kernel.activity → one audit record per signal about the session
//	                  (kernel.activity <signal>), through Config.Record,
//	                  when the session runs that kernel on that agent: what
//	                  the idle limit counts as use (see activity.go)
//
// A report counts only for the agent that sent it, which the subject it
// arrived on names (bus.ReportSender: the bus's permissions let only an
// agent's own credentials publish there); one that claims another agent is
// dropped and logged.
//
// Every message is handled at least once. The commands are idempotent (a
// repeated register appends nothing, a repeated or stale report is no
// news to the domain), and the kernel.sync answer's id is derived from the
// register message's id, so a redelivered register republishes a message
// JetStream drops. A message that does not decode, and a report the domain
// refuses for good (invalid, unknown session or kernel, a conflict such as
// a report from an agent that no longer owns the kernel), is dropped; any
// other failure is retried by redelivery. One conflict is retried: a
// report about a kernel whose session is still PENDING, which happens when
// an agent answers a kernel.create (sent on agent.allocated) before the
// scheduler has recorded session.scheduled.
//
// # Liveness
//
// The consumer folds the agents' status events from the event store's log
// (from position 0, so a restarted manager knows every agent) and notes
// when each was last heard from (any message counts). Silence has two
// stages, as operators of GPU clusters expect (a node that reboots or
// drops off the network for a minute still runs its containers, which
// still hold its GPUs):
//
//   - an alive agent silent for longer than Config.HeartbeatTimeout is
//     disconnected (commands.DisconnectAgent): its sessions are
//     DISCONNECTED (agent-disconnected) and keep their allocations,
//     nothing is torn down, and nothing new is placed on it. When it is
//     heard from again it comes back: a heartbeat runs
//     commands.ReconnectAgent with the kernels it reports running (their
//     sessions return to their phase, agent-reconnected), a register
//     reconnects it, and a kernel's report reconnects that kernel's
//     session (an exit that happened meanwhile ends it as usual);
//   - a disconnected agent silent for longer than Config.AgentLostTimeout
//     (counted from when it was last heard from) is given up on with
//     commands.MarkAgentLost, which puts its sessions in ERROR
//     (agent-lost) and releases their allocations. A lost agent that still
//     runs comes back with its next agent.register (agents re-register
//     periodically); the kernel.sync answering it no longer lists those
//     kernels, so the agent removes them.
//
// After a manager restart every agent not lost gets a full timeout from
// the moment the log was read, so that a manager that was down does not
// mistake its own absence for the agents'.
package reports
