package scheduler

import (
	"cmp"
	"slices"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// Request is a PENDING session as placement sees it.
type Request struct {
	SessionID   uuid.UUID
	Priority    int
	RequestedAt time.Time
	ClusterMode domain.ClusterMode
	// Kernels in session order (main first), each with its requested slots.
	Kernels []KernelRequest
}

// KernelRequest is one kernel to place.
type KernelRequest struct {
	KernelID uuid.UUID
	Slots    domain.Slots
}

// Node is an agent that may take kernels: what it offers, what is already
// taken, and how much of each accelerator device is still free. Lost
// agents are not nodes.
type Node struct {
	AgentID  string
	Capacity domain.Slots
	Occupied domain.Slots
	Devices  []NodeDevice
}

// NodeDevice is one accelerator of a node and its free share
// (domain.DeviceShareCapacity when nothing is allocated on it).
type NodeDevice struct {
	ID   string
	Kind domain.SlotName
	Free domain.Quantity
}

// Plan is the outcome of one placement round.
type Plan struct {
	// Placed lists the sessions placed, in the order they were considered.
	Placed []Placement
	// Unplaced lists the sessions that could not be placed, each with every
	// failed check.
	Unplaced []Unplaced
}

// Placement is where every kernel of one session goes.
type Placement struct {
	SessionID uuid.UUID
	Kernels   []domain.KernelPlacement
}

// Unplaced is a session left PENDING and why: a status reason
// (no-available-instances) and details naming what no agent could offer.
type Unplaced struct {
	SessionID uuid.UUID
	Reason    string
	Details   []string
}

// Place decides, over a snapshot of the nodes, where the pending sessions
// go. It is a pure function: same input, same plan.
//
// Rules:
//   - Order: highest priority first, then oldest request, then session id.
//     A session that does not fit does not block the ones after it; the
//     ones after it may take what it would need (a large request can wait
//     behind smaller ones — the price of never blocking a round).
//   - A session is placed whole or not at all. A single-node session's
//     kernels all go on one node; a multi-node session's kernels each
//     choose a node, in kernel order.
//   - A node fits a kernel (or a single-node session) when every requested
//     slot fits in capacity minus occupancy, and its accelerator request can
//     be assigned to concrete devices (see assignDevices).
//   - Among the nodes that fit, the dispersed selector takes the one with
//     the most free capacity: nodes without accelerators the request does
//     not use come first, then the larger free amount of the requested
//     accelerator slot, of cpu, of mem, of the other requested slots (by
//     name), then the smaller agent id.
//   - Each placement is subtracted from the snapshot before the next
//     session is considered, so one plan never oversubscribes a node or a
//     device (the agent streams' expected revisions guard the rest).
func Place(requests []Request, nodes []Node) Plan { return place(requests, nodes, nil) }

// admission is what quotas say of the sessions of a round, in placement
// order: check returns every quota check a session fails (none: it may be
// placed), charge counts a session placed.
type admission interface {
	check(r Request) []string
	charge(r Request)
}

// place is Place with quota checks when adm is not nil: a session that
// fails one is left unplaced with the reason predicate-checks-failed and
// every failure, before any agent is tried; a placed one is charged, so
// the later sessions of the round are checked against it too.
func place(requests []Request, nodes []Node, adm admission) Plan {
	work := make([]*node, len(nodes))
	for i, n := range nodes {
		work[i] = newNode(n)
	}
	slices.SortFunc(work, func(a, b *node) int { return cmp.Compare(a.id, b.id) })

	order := slices.Clone(requests)
	slices.SortStableFunc(order, compareRequests)

	var plan Plan
	for _, r := range order {
		if adm != nil {
			if failed := adm.check(r); len(failed) > 0 {
				plan.Unplaced = append(plan.Unplaced, Unplaced{SessionID: r.SessionID, Reason: domain.ReasonPredicateChecks, Details: failed})
				continue
			}
		}
		if kernels, ok := placeSession(r, work); ok {
			if adm != nil {
				adm.charge(r)
			}
			plan.Placed = append(plan.Placed, Placement{SessionID: r.SessionID, Kernels: kernels})
			continue
		}
		plan.Unplaced = append(plan.Unplaced, Unplaced{
			SessionID: r.SessionID,
			Reason:    domain.ReasonNoAvailableInstances,
			Details:   explain(r, work),
		})
	}
	return plan
}

// compareRequests orders the queue: priority first, then FIFO.
func compareRequests(a, b Request) int {
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	if c := a.RequestedAt.Compare(b.RequestedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.SessionID.String(), b.SessionID.String())
}

// placeSession places every kernel of r, committing to the nodes only when
// all of them found a place.
func placeSession(r Request, nodes []*node) ([]domain.KernelPlacement, bool) {
	if len(r.Kernels) == 0 {
		return nil, false
	}
	if r.ClusterMode == domain.ClusterMultiNode {
		return placeSpread(r, nodes)
	}
	return placeTogether(r, nodes)
}

// placeTogether puts all kernels on the best node that takes them all.
func placeTogether(r Request, nodes []*node) ([]domain.KernelPlacement, bool) {
	total := domain.Slots{}
	for _, k := range r.Kernels {
		total = total.Add(k.Slots)
	}
	d := newDemand(total)
	var (
		best       *node
		bestResult []domain.KernelPlacement
	)
	for _, n := range nodes {
		if !total.FitsIn(n.free) || (best != nil && !n.moreFree(best, d)) {
			continue
		}
		var (
			kernels []domain.KernelPlacement
			ok      bool
		)
		if len(r.Kernels) == 1 {
			var devices []domain.DeviceShare
			devices, ok = n.fits(r.Kernels[0].Slots)
			kernels = []domain.KernelPlacement{{KernelID: r.Kernels[0].KernelID, AgentID: n.id, Devices: devices}}
		} else {
			kernels, ok = n.clone().takeAll(r.Kernels)
		}
		if ok {
			best, bestResult = n, kernels
		}
	}
	if best == nil {
		return nil, false
	}
	for i, k := range r.Kernels {
		best.take(k.Slots, bestResult[i].Devices)
	}
	return bestResult, true
}

// placeSpread lets each kernel choose its node, on a copy of the nodes it
// touches, and commits the copies when every kernel found one.
func placeSpread(r Request, nodes []*node) ([]domain.KernelPlacement, bool) {
	trial := map[*node]*node{} // original → copy with this session's kernels taken
	current := func(n *node) *node {
		if c, ok := trial[n]; ok {
			return c
		}
		return n
	}
	out := make([]domain.KernelPlacement, 0, len(r.Kernels))
	for _, k := range r.Kernels {
		d := newDemand(k.Slots)
		var (
			best    *node
			devices []domain.DeviceShare
		)
		for _, orig := range nodes {
			n := current(orig)
			if !k.Slots.FitsIn(n.free) || (best != nil && !n.moreFree(current(best), d)) {
				continue
			}
			if dev, ok := n.fits(k.Slots); ok {
				best, devices = orig, dev
			}
		}
		if best == nil {
			return nil, false
		}
		if _, ok := trial[best]; !ok {
			trial[best] = best.clone()
		}
		trial[best].take(k.Slots, devices)
		out = append(out, domain.KernelPlacement{KernelID: k.KernelID, AgentID: best.id, Devices: devices})
	}
	for orig, c := range trial {
		*orig = *c
	}
	return out, true
}
