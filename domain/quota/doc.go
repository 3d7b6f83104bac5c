// Package quota is the pure model of resource quotas (resource policies
// and scheduling, docs/architecture.md): what each keypair, user, project
// and domain occupies and queues, what it may occupy, and the checks that
// compare the two. It does no I/O; its folds take decoded domain events
// and the key of the stream they came from.
//
// # Occupancy is derived from events
//
// A Ledger folds session and agent events. What a subject occupies is the
// sum of the allocations that are live now (agent.allocated not yet
// followed by agent.released for that kernel), each attributed to the
// owner of its session (session.requested names the keypair, user,
// project and domain). It is never a counter that commands increment and
// decrement: the Ledger keeps the set of live allocations (Snapshot sums
// it) and running totals per subject that only the same allocation,
// release and session events change (Held, tested equal to Snapshot), and
// every path that ends a session — normal termination, ERROR, CANCELLED,
// forced termination, a lost agent — releases through agent.released,
// which is what the Ledger counts.
//
// Why allocations rather than session statuses: resources are held "from
// SCHEDULED until the kernel's container is gone", per kernel; a
// multi-kernel session whose first kernel ended already gave that
// kernel's slots back while the session still runs, and a session that
// ended keeps what its agents have not released yet. The agents' streams
// are the one record of both, the same the scheduler places against, so
// quota occupancy and agent occupancy are the same numbers.
//
// Session counts come from session events: a session is pending from
// session.requested until session.scheduled (or its end), and concurrent
// from session.scheduled until session.terminated, session.cancelled or
// session.errored. Pending slots are the sum of what pending sessions ask.
//
// # Limits
//
// Limits folds the tenancy events that carry limits: keypairs (their
// policy and owner), keypair resource policies, users' main keypairs,
// projects' and domains' total_resource_slots. A keypair is limited by
// its policy; a user by the policy of its main keypair; projects and
// domains by their totals. In a keypair policy a slot that
// total_resource_slots does not name is limited to 0 or unlimited as
// default_for_unspecified says; in a project's or a domain's totals it is
// unlimited. In max_pending_session_resource_slots only the slots named
// are limited (an empty map limits nothing).
//
// # Checks
//
// Admit is the check at enqueue time, over what a read model knows (it
// may lag; see commands.RequestSession for the race this leaves). View
// builds the quota view (placement.Quotas) the scheduler hands to
// domain/placement, whose checks are the authoritative ones, over the log
// the scheduler folded itself: concurrency and the keypair, user, project
// and domain slot limits, every failure reported, none hidden behind the
// first.
package quota
