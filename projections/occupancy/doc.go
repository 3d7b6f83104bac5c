// Package occupancy is the read model of quota occupancy: for every
// keypair, user, project and domain, what its sessions occupy (the sum of
// their live allocations), how many are concurrent (scheduled, not ended)
// and pending, and what the pending ones ask. It mirrors domain/quota's
// Ledger as rows, so the two agree on the same events (tested), and like
// every projection it is rebuilt from position 0 to exactly the rows the
// live projector wrote.
//
// # Facts and their totals
//
// The fact tables hold one row per session (owner and phase: pending,
// active, or ended while an allocation is still live), one per requested
// slot of a pending session, and one per slot of each live allocation
// (agent.allocated inserts it, agent.released deletes it). A session's
// row goes when it has ended and its last allocation is released.
//
// Beside them, occupancy_totals keeps per subject (scope, key) its
// running sums: sessions pending and active, slots requested by the
// pending ones, slots occupied. Each event changes them by what it adds
// or removes, in the same statement order and transaction as the facts
// (every change is computed from the fact rows before they change), so
// reading a subject costs a few rows however many sessions it has queued:
// admission reads it on every session request. Totals back at 0 are
// deleted at the end of each batch. Tests check the totals against the
// pure fold (quota.Ledger) and a rebuild against the live rows.
//
// Standings answers commands.RequestSession's admission checks from this
// read model and the tenancy one (the keypair's policy, the user's main
// keypair's policy, the project's and the domain's totals), and
// Standings.Quotas the quota view placement checks (quota.View), for
// explanations of waiting sessions.
package occupancy
