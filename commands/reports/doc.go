// Package reports is the manager's consumer of what agents report on the
// bus (agents/protocol, topic bus.ReportsTopic, one durable consumer shared
// by the server replicas), and its agent liveness check:
//
//	agent.register  → commands.RegisterAgent (idempotent; rejoins a lost
//	                  agent), creates the agent's consumer of its topic (the
//	                  agent may only bind to it), then a kernel.sync on the
//	                  agent's topic listing
//	                  the kernels allocated on it and the agent stream's
//	                  revision that list was read at
//	agent.heartbeat → the agent is alive
//	kernel.status   → commands.ReportKernelStatus
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
// The consumer folds the agents' registrations and losses from the event
// store's log (from position 0, so a restarted manager knows every agent)
// and notes when each was last heard from (any message counts). An alive
// agent silent for longer than Config.HeartbeatTimeout is declared lost
// with commands.MarkAgentLost, which puts its sessions in ERROR
// (agent-lost) and releases their allocations. After a manager restart
// every alive agent gets a full timeout from the moment the log was read,
// so that a manager that was down does not mistake its own absence for the
// agents'. A lost agent that still runs comes back with its next
// agent.register (agents re-register periodically).
package reports
