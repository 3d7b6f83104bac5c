package scheduler

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/cairnhq/cairn/commands/quotas"
	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// state is the scheduler's read-only view of the cluster, folded from the
// global log: the sessions that have not ended and every agent with its
// allocations. Only the loop goroutine touches it.
type state struct {
	// position is the global position of the last event folded.
	position uint64
	sessions map[uuid.UUID]*sessionView
	agents   map[string]*agentView
	// quotas are the limits and the occupancy folded from the same log.
	quotas *quotas.Book
}

func newState() *state {
	return &state{sessions: map[uuid.UUID]*sessionView{}, agents: map[string]*agentView{}, quotas: quotas.NewBook()}
}

// sessionView is what the scheduler knows of a session that has not ended.
type sessionView struct {
	id          uuid.UUID
	priority    int
	clusterMode domain.ClusterMode
	requestedAt time.Time
	kernels     []kernelView

	status         domain.SessionStatus
	statusReason   string
	pendingDetails []string
	// attempts counts the rounds that could not place the session: the
	// tries recorded with its pending reasons. It starts from the count
	// last recorded.
	attempts int
	// since is when the session entered its current status (the time the
	// event carries: the writer's clock).
	since time.Time
}

type kernelView struct {
	id      uuid.UUID
	slots   domain.Slots
	agentID string
	status  domain.SessionStatus
}

// agentView is an agent and what is allocated on it.
type agentView struct {
	id          string
	capacity    domain.Slots
	devices     []domain.Device
	lost        bool
	allocations map[uuid.UUID]domain.Allocation
}

// request is the placement input for a PENDING session.
func (s *sessionView) request() Request {
	r := Request{SessionID: s.id, Priority: s.priority, RequestedAt: s.requestedAt, ClusterMode: s.clusterMode}
	for _, k := range s.kernels {
		r.Kernels = append(r.Kernels, KernelRequest{KernelID: k.id, Slots: k.slots.Clone()})
	}
	return r
}

// node is the placement input for an alive agent.
func (a *agentView) node() Node {
	n := Node{AgentID: a.id, Capacity: a.capacity.Clone(), Occupied: domain.Slots{}}
	used := map[string]domain.Quantity{}
	for _, al := range a.allocations {
		n.Occupied = n.Occupied.Add(al.Slots)
		for _, d := range al.Devices {
			used[d.DeviceID] += d.Amount
		}
	}
	for _, d := range a.devices {
		n.Devices = append(n.Devices, NodeDevice{ID: d.ID, Kind: d.Kind, Free: domain.DeviceShareCapacity - used[d.ID]})
	}
	return n
}

// pending returns the placement requests of every PENDING session.
func (st *state) pending() []Request {
	var out []Request
	for _, s := range st.sessions {
		if s.status == domain.StatusPending {
			out = append(out, s.request())
		}
	}
	return out
}

// nodes returns the placement input for every alive agent, by id.
func (st *state) nodes() []Node {
	var out []Node
	for _, id := range slices.Sorted(maps.Keys(st.agents)) {
		if a := st.agents[id]; !a.lost {
			out = append(out, a.node())
		}
	}
	return out
}

// sessionsIn returns the sessions in one of the statuses, oldest request
// first (a deterministic order for timeouts).
func (st *state) sessionsIn(statuses ...domain.SessionStatus) []*sessionView {
	var out []*sessionView
	for _, s := range st.sessions {
		if slices.Contains(statuses, s.status) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *sessionView) int {
		if c := a.requestedAt.Compare(b.requestedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.id.String(), b.id.String())
	})
	return out
}
