// Package scheduler is the manager's placement process manager: it decides
// where PENDING sessions run and keeps every session moving through its
// phases.
//
// # Design
//
// After HashiCorp Nomad's scheduler: the decision is a pure function,
// domain/placement.Place, over a read-only view (the pending sessions and
// the agents' capacity, occupancy and device shares, folded from events
// into placement.Input); the Scheduler submits what it
// decided through the command handlers, whose appends with expected
// revisions on the agents' streams are the single applier that may refuse
// an optimistic plan (commands.ScheduleSession). Oversubscription is
// therefore impossible even when the view is stale: a refused placement
// waits for the next round.
//
// # The loop
//
// Run subscribes to the global log from position 0 and folds sessions and
// agents (allocations included) into its view, so a restarted scheduler
// rebuilds exactly what it knew. Once caught up it reconciles what a crash
// may have left half-made (allocations without a scheduled session), then
// runs rounds. A round runs only after the view has folded the
// scheduler's own previous writes, so it never decides twice on the same
// capacity. A full round runs when an event may let a session that
// already waited in (agent.registered, agent.rejoined, agent.reconnected,
// agent.released, a session ending, a limit changing), and every
// Config.Interval when a decision may change without an event: a waiting
// session's starts_at reached, a fifo queue holding sessions that may
// block (each full round tries the first of them), a placement refused
// since the last full round. Every
// Config.Interval the timeouts (1 and 2 below) are checked and the
// allocations reconciled, without a placement when none is due. Each
// full round:
//
//  1. cancels sessions PENDING past Config.PendingTimeout (pending-timeout);
//  2. puts in ERROR sessions stuck between SCHEDULED and CREATING past
//     Config.StartTimeout (failed-to-start), and force-terminates sessions
//     TERMINATING past Config.TerminatingTimeout (force-terminated);
//  3. places every PENDING session it can (ScheduleSession) and records,
//     for each one it cannot, its reason (predicate-checks-failed or
//     no-available-instances) and every failed check
//     (UpdatePendingSession) — only when they changed, so a waiting
//     session costs no event per round.
//
// # Arrivals rounds
//
// When only new sessions arrived (session.requested), an arrivals round
// decides on them alone, so a request costs the same with an empty queue
// or a long one. That decides as a full round would: nothing was freed
// since the waiting sessions were last tried, so each would fail again
// and take nothing. The one exception is fifo blocking (a session that
// found no room holds the ones behind it): the scheduler counts, per
// priority, the waiting sessions that may block (not tried yet, or no
// room with tries left before they are skipped), and an arrival at or
// below the highest such priority is not decided alone but left, untried,
// to the next full round (at most Config.Interval later). Time-driven
// changes (starts_at reached, pending timeouts) are the full rounds' too.
//
// # Quotas
//
// The same fold feeds a quota book (commands/quotas): the limits of
// keypairs, their policies, users' main keypairs, projects and domains,
// and the occupancy derived from allocations and releases (domain/quota).
// Each round's input carries the quota view of its pending sessions'
// subjects (placement.Quotas), so placement checks max_concurrent_sessions
// and the keypair, user, project and domain total_resource_slots
// authoritatively, over the log itself rather than a read model, counting
// the round's own placements; a change of a limit wakes a round.
//
// Until resource groups exist, the input has no group view (every agent
// serves every session: fifo, dispersed, a session that finds no room
// blocks the queue for one round). Starts_at, dependencies (a session's
// result once it ended) and the architecture come from session.requested.
//
// One Scheduler runs per cluster at a time (the leader); two would release
// each other's half-made placements in their reconcile.
package scheduler
