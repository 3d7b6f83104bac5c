package readapi

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/cairnhq/cairn/projections/agents"
	"github.com/cairnhq/cairn/projections/occupancy"
	"github.com/cairnhq/cairn/projections/sessions"
)

// round is a scheduling round run on the read models: every PENDING
// session, every agent and the quota view, given to placement.Place
// exactly as the scheduler gives its own fold (commands/scheduler), so
// the checks, their order and the queue are the scheduler's own. Its
// inputs may lag the scheduler's view by what the projectors have not
// applied yet.
type round struct {
	now    time.Time
	queue  []sessions.Queued
	rooms  []agentRoom
	in     placement.Input
	res    placement.Result
	byID   map[uuid.UUID]int // index in queue
	rank   map[uuid.UUID]int // 1-based position in res.Order
	placed map[uuid.UUID]bool
	failed map[uuid.UUID]placement.Unplaced
}

// simulate runs the round: a fixed number of queries (the queue and its
// kernels, the dependencies' outcomes, the agents, the occupancy per
// scope) plus one tenancy lookup per distinct keypair, user, project and
// domain of the queue.
func (a *api) simulate(ctx context.Context) (*round, error) {
	queue, err := a.Sessions.Pending(ctx)
	if err != nil {
		return nil, err
	}
	var deps []uuid.UUID
	for _, q := range queue {
		deps = append(deps, q.Dependencies...)
	}
	slices.SortFunc(deps, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	outcomes, err := a.Sessions.Outcomes(ctx, slices.Compact(deps))
	if err != nil {
		return nil, err
	}
	list, err := a.Agents.ListAgents(ctx, agents.Filter{})
	if err != nil {
		return nil, err
	}
	r := &round{now: a.Clock(), queue: queue, byID: map[uuid.UUID]int{}, rank: map[uuid.UUID]int{},
		placed: map[uuid.UUID]bool{}, failed: map[uuid.UUID]placement.Unplaced{}}
	r.in = placement.Input{Now: r.now, Ungrouped: a.Queue, Agents: make([]placement.Agent, len(list))}
	for i, ag := range list {
		room := roomOf(ag)
		r.rooms = append(r.rooms, room)
		r.in.Agents[i] = placementAgent(ag, room)
	}
	owners := make([]quota.Session, len(queue))
	for i, q := range queue {
		r.byID[q.ID] = i
		r.in.Sessions = append(r.in.Sessions, placementSession(q, outcomes))
		owners[i] = quota.Session{ID: q.ID, Owner: q.Owner, Domain: q.Domain, Project: q.Project,
			Kernels: len(q.Kernels), Requested: q.RequestedSlots}
	}
	if len(queue) > 0 {
		st := occupancy.Standings{Tenancy: a.Tenancy, Occupancy: a.Occupancy}
		if r.in.Quotas, err = st.Quotas(ctx, owners); err != nil {
			return nil, err
		}
	}
	if r.res, err = placement.Place(r.in); err != nil {
		return nil, &domain.Error{Op: "scheduler.explain", Kind: domain.KindInternal, Err: err}
	}
	for i, id := range r.res.Order {
		r.rank[id] = i + 1
	}
	for _, p := range r.res.Placed {
		r.placed[p.SessionID] = true
	}
	for _, u := range r.res.Unplaced {
		r.failed[u.SessionID] = u
	}
	return r, nil
}

// placementAgent is the agent as the scheduler gives it to placement: its
// capacity, the sum of its allocations and every device's used share.
func placementAgent(ag agents.Agent, room agentRoom) placement.Agent {
	p := placement.Agent{ID: ag.ID, Architecture: ag.Architecture, Schedulable: room.schedulable,
		Capacity: ag.Capacity, Occupied: ag.Occupied}
	if p.Occupied == nil {
		p.Occupied = domain.Slots{}
	}
	for _, d := range ag.Devices {
		used, err := domain.ParseQuantity(d.Occupied, domain.SlotCount)
		if err != nil {
			used = domain.DeviceShareCapacity
		}
		// Named by agent too: a device id listed by two agents (which
		// placement refuses as a malformed round) must not stop every
		// explanation; the ids of the outcome are not used.
		p.Devices = append(p.Devices, placement.Device{ID: ag.ID + "/" + d.ID, Kind: d.Kind, Used: used})
	}
	return p
}

// placementSession is a queued session as the scheduler gives it to
// placement (commands/scheduler's pendingSession).
func placementSession(q sessions.Queued, outcomes map[uuid.UUID]sessions.Outcome) placement.Session {
	p := placement.Session{
		ID: q.ID, AccessKey: q.Owner.AccessKey, UserID: q.Owner.UserID, Project: domain.ProjectKey(q.Domain, q.Project),
		Domain: q.Domain, ResourceGroup: q.ResourceGroup, Priority: q.Priority, EnqueuedAt: q.CreatedAt, EnqueuedSeq: q.Seq,
		StartsAt: q.StartsAt, ClusterMode: q.ClusterMode, Architecture: q.Architecture, Tries: q.PendingTries,
	}
	for _, dep := range q.Dependencies {
		state := placement.DependencyUnknown
		if o, ok := outcomes[dep]; ok {
			switch {
			case !o.Status.IsTerminal():
				state = placement.DependencyUnfinished
			case o.Status == domain.StatusTerminated && o.Result == domain.ResultSuccess:
				state = placement.DependencySucceeded
			default:
				state = placement.DependencyFailed
			}
		}
		p.Dependencies = append(p.Dependencies, placement.Dependency{SessionID: dep, State: state})
	}
	for _, k := range q.Kernels {
		p.Kernels = append(p.Kernels, placement.Kernel{ID: k.ID, Slots: k.RequestedSlots})
	}
	return p
}
