// Package forwarder is the manager's outbox: it follows the event store's
// global log and publishes, on the message bus, what the agents must act
// on (agents/protocol):
//
//	agent.allocated                     → kernel.create  to the agent's topic (message id = event id)
//	agent.released                      → kernel.destroy to the agent's topic (message id = event id)
//	session.terminating, session.errored → kernel.destroy to each placed kernel's agent
//	                                      (message id = protocol.DerivedID(event id, kernel id))
//
// A kernel.create is self-contained: the allocation gives the kernel, its
// slots and devices and the allocation's revision in the agent's stream;
// the session's session.requested event (the first of its stream) gives
// the image, command and environment. A destroy on session.terminating
// goes to every kernel the session placed, as the session stood at that
// event (its stream folded up to the event's revision), so the message is
// the same whenever it is (re)built.
//
// # Delivery and the checkpoint
//
// Delivery is at least once. The forwarder publishes an event's messages
// (retrying with backoff until the bus takes them, so no event is ever
// skipped for a transient failure), and only then counts the event as
// done; it saves the position of the last event done in a Checkpoint
// every Config.SaveEvery events, whenever it has nothing buffered to do,
// and when it stops. After a crash it resumes from the saved position and
// republishes the events after it: the messages carry the same ids
// (derived from the event ids), so JetStream drops the copies within its
// duplicate window, and agents are idempotent by kernel id beyond it.
//
// The checkpoint is a small file (FileCheckpoint) in the data directory,
// next to the SQLite store it belongs to, replaced atomically (write, fsync,
// rename, fsync the directory). Keeping it out of the event store keeps
// the store free of bookkeeping events; the Checkpoint port lets a
// database-backed checkpoint (the projections' checkpoint table) replace
// it where several server replicas take turns as leader.
//
// An event that can never be translated (a payload that does not decode,
// an allocation of a session that does not exist) is logged and skipped:
// the start deadline of the scheduler ends a session whose kernel.create
// never went out.
package forwarder
