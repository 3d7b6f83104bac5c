// Package placement is Cairn's scheduling decision: a pure, deterministic
// function (Place) from the pending sessions, the agents with their
// capacity, occupancy and devices, the resource groups and the quota view
// to placements — every kernel's agent and exactly which devices with
// which shares — and, for every session left pending, every check it
// failed. It does no I/O and imports only the domain and the standard
// library; the scheduler loop (commands/scheduler) folds its input from
// events and writes its output as commands.
//
// # Checks
//
// Every session's own checks are evaluated and all failures reported:
// the request is valid (cuda.device, cuda.shares and MIG profiles are
// mutually exclusive in one kernel; shares in steps of 0.01; whole
// devices; a MIG profile takes exactly 1); starts_at is reached; every
// dependency finished successfully; the resource group exists, is active
// and allowed for the session's domain, project or keypair; the keypair's
// max_concurrent_sessions is not reached; and for the keypair, user,
// project and domain, occupied + placed this round + requested ≤ limit
// for every requested slot (a slot a policy does not name is unlimited or
// limited to 0 per its default_for_unspecified). A session failing one of
// these is still tried against the agents, without taking anything, so
// that a lack of room is reported as well; its reason is
// predicate-checks-failed, otherwise no-available-instances.
//
// # Order
//
// Priority first, always: levels from the highest, across groups (quotas
// are shared), and within a level each group (by name) in its order:
//   - fifo: oldest first (EnqueuedAt, EnqueuedSeq, id). A session that
//     passes its checks but finds no room blocks its group's queue: the
//     sessions behind it, at its priority and below, are reported blocked
//     and not tried (their tries are not counted), so a large request is
//     not starved by a stream of small ones. It does not block when it
//     cannot fit in the group even empty (more than any agent's capacity,
//     no agent of its architecture), nor once it has failed
//     SkipAfterTries tries (0: never skip) — then it is still tried every
//     round but smaller sessions behind it may take the room. Blocking is
//     per resource group: other groups have other agents. Sessions that
//     fail their own checks never block.
//   - lifo: newest first; nothing blocks.
//   - drf: the access key with the lowest dominant share (its largest
//     occupied/capacity ratio over the group's slots, counting this
//     round's placements) goes next with its oldest session; nothing
//     blocks.
//
// # Agents
//
// A demand — all kernels of a single-node session together, or one kernel
// of a multi-node session — may go to a schedulable agent of the group
// with the session's architecture (any when it names none) where every
// slot fits in capacity − occupied and the devices can serve it. Agents
// without accelerator kinds the demand does not use are preferred (a
// CPU-only session leaves GPU agents to GPU sessions). Among those, the
// group's selector picks, comparing the demand's slots in order
// (accelerator, cpu, mem, others): dispersed the most free, concentrated
// the least free (bin packing), legacy the largest capacity, roundrobin
// the first that fits from ResourceGroup.RoundRobinNext in agent-id order
// (Result.RoundRobinNext is where the next round starts); ties go to the
// smaller agent id. A multi-node session's kernels choose one after the
// other, each seeing the earlier ones, in a trial rolled back if one
// fails: a session is placed whole or not at all.
//
// # Devices
//
// Whole devices (cuda.device, other accelerators) and MIG profiles take
// devices with nothing allocated, by id (recorded as amount 1 each).
// cuda.shares of at most one device's capacity go on one device, the one
// with the least free share that holds them (best fit keeps whole devices
// whole and large holes large); more are split into near-equal parts in
// steps of 0.01 over the fewest devices that hold them, each part best
// fit; when the group allows fractional fragmentation and no near-equal
// split fits, any parts that fit (the largest free shares first, the rest
// best fit). A single-node session's kernels get their devices whole
// devices first, then shares largest first.
//
// # Invariants (tested by property tests)
//
//   - No slot of an agent and no device is ever given beyond what is
//     free: every placement is subtracted before the next decision.
//   - No quota is exceeded, counting this round's earlier placements.
//   - Every placement satisfies its request exactly: the devices match the
//     accelerator slot's kind and amount.
//   - A session is placed whole or not at all; every input session is
//     either placed or unplaced with at least one failure.
//   - Same input, same output, whatever the order of the input's slices.
//
// # Cost
//
// Agents are compiled into dense vectors (slots numbered per round) and
// grouped into pools of one group, architecture and accelerator offer.
// Each pool keeps a max-tree of its agents' free amounts (per slot, and
// per device kind the largest free share of one device, the free shares
// in total and the entirely free devices), updated along one path per
// placement: its root is exact (explanations read it instead of every
// agent) and a scan skips the subtrees that cannot serve a demand. For
// dispersed and concentrated, each pool also keeps its agents ranked by
// the selector's own order for each slot list demands use, moved one at a
// time as placements change them, so the first agent that fits in rank
// order is the choice and the scan stops there (tests check that this
// agrees with comparing every agent). Requests are compiled into slabs.
// BenchmarkPlace measures a round of 10,000 sessions over 1,000 agents × 8
// GPUs.
package placement
