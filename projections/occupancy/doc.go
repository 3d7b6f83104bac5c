// Package occupancy is the read model of quota occupancy: for every
// keypair, user, project and domain, what its sessions occupy (the sum of
// their live allocations), how many are concurrent (scheduled, not ended)
// and pending, and what the pending ones ask. It mirrors domain/quota's
// Ledger as rows, so the two agree on the same events (tested), and like
// every projection it is rebuilt from position 0 to exactly the rows the
// live projector wrote.
//
// # No counter
//
// The tables hold facts, never totals: one row per session (owner and
// phase: pending, active, or ended while an allocation is still live),
// one per requested slot of a pending session, and one per slot of each
// live allocation (agent.allocated inserts it, agent.released deletes
// it). Every sum is computed by the query that reads it, in one
// statement (one snapshot), so no update path can make a total drift
// from the allocations it stands for. A session's row goes when it has
// ended and its last allocation is released.
//
// Standings answers commands.RequestSession's admission checks from this
// read model and the tenancy one (the keypair's policy, the user's main
// keypair's policy, the project's and the domain's totals), and
// Standings.Quotas the quota view placement checks (quota.View), for
// explanations of waiting sessions.
package occupancy
