package scheduler

import (
	"cmp"
	"slices"
	"time"

	"github.com/cairnhq/cairn/commands/quotas"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/cairnhq/cairn/domain/quota"
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
	// ended tells, for every session that has ended, whether it succeeded
	// (TERMINATED with the result success), for the sessions that depend
	// on it. It grows with the log, a few dozen bytes a session, until a
	// snapshot bounds it.
	ended map[uuid.UUID]bool
	// quotas are the limits and the occupancy folded from the same log:
	// the quota view of every round.
	quotas *quotas.Book
	// arrivals are the sessions requested since the last round that
	// considered them, in log order.
	arrivals []uuid.UUID
	// blockers counts, per priority, the PENDING sessions that may block
	// a fifo queue (sessionView.mayBlock).
	blockers map[int]int
	// nextStart is the earliest starts_at of a PENDING session not reached
	// at the last full round (zero: none): when it passes, a periodic
	// round places again.
	nextStart time.Time
	// retry: a placement was refused since the last full round, so the
	// next periodic round places again.
	retry bool
}

func newState() *state {
	return &state{sessions: map[uuid.UUID]*sessionView{}, agents: map[string]*agentView{}, ended: map[uuid.UUID]bool{},
		quotas: quotas.NewBook(), blockers: map[int]int{}}
}

// sessionView is what the scheduler knows of a session that has not ended.
type sessionView struct {
	id          uuid.UUID
	owner       domain.Owner
	domainName  string
	project     string
	group       string
	priority    int
	clusterMode domain.ClusterMode
	requestedAt time.Time
	// seq is the global position of its session.requested: the queue's
	// order among sessions requested at the same time.
	seq          uint64
	startsAt     time.Time
	dependencies []uuid.UUID
	architecture string
	kernels      []kernelView

	status         domain.SessionStatus
	statusReason   string
	pendingDetails []string
	// attempts counts the rounds that tried and could not place the
	// session: the tries recorded with its pending reasons. It starts from
	// the count last recorded.
	attempts int
	// since is when the session entered its current status (the time the
	// event carries: the writer's clock).
	since time.Time
	// revision is the session stream's as folded (its annotations
	// included): placements are written expecting it.
	revision int64
	// awaiting are the agents a DISCONNECTED session waits for.
	awaiting []string
	// mayBlock: under fifo, the session could block the sessions behind
	// it in a full round (it was not tried, or it found no room and has
	// tries left before it is skipped), so an arrival at its priority or
	// below waits for a full round instead of being placed alone.
	mayBlock bool
}

type kernelView struct {
	id      uuid.UUID
	slots   domain.Slots
	agentID string
	status  domain.SessionStatus
}

// agentView is an agent and what is allocated on it.
type agentView struct {
	id           string
	architecture string
	capacity     domain.Slots
	devices      []domain.Device
	// unreachable: lost or disconnected, so nothing is placed on it;
	// backAt is when it last came back (rejoined or reconnected).
	unreachable bool
	backAt      time.Time
	allocations map[uuid.UUID]domain.Allocation
	// agg is the agent aggregate folded from the same events, at its
	// stream's revision: placements are decided on it instead of reading
	// the stream again. Nil once an event did not fold (the writes then
	// read the stream).
	agg *domain.Agent
}

// defaultQueue is how the queue is ordered until resource groups exist (no
// group view yet: every agent serves every session): fifo, the dispersed
// selector, and a session that found no room blocks the ones behind it
// for one round only (SkipAfterTries 1), so a large request gets the
// first claim on capacity that frees up, and never stalls the queue.
var defaultQueue = placement.ResourceGroup{Order: placement.OrderFIFO, Selector: placement.SelectorDispersed, SkipAfterTries: 1}

// input is the placement input for the PENDING sessions (but those in
// skip) and every agent, in map order (placement does not depend on it),
// with the quota view of the sessions' keypairs, users, projects and
// domains (limits and occupancy folded from the same log).
// Every arrival is considered by it: none is left to an arrivals round.
func (st *state) input(now time.Time, skip map[uuid.UUID]bool, queue placement.ResourceGroup) placement.Input {
	st.arrivals, st.nextStart, st.retry = nil, time.Time{}, false
	var pending []*sessionView
	for id, s := range st.sessions {
		if s.status == domain.StatusPending && !skip[id] {
			pending = append(pending, s)
			st.startsLater(s, now)
		}
	}
	return st.inputOf(now, pending, queue)
}

// startsLater notes s's starts_at in nextStart when it is after now.
func (st *state) startsLater(s *sessionView, now time.Time) {
	if s.startsAt.After(now) && (st.nextStart.IsZero() || s.startsAt.Before(st.nextStart)) {
		st.nextStart = s.startsAt
	}
}

// placementDue reports whether a periodic round may place differently
// from the last full round although no event asked for one: a fifo queue
// holds sessions that may block (the next full round tries the first of
// them), a starts_at was reached, or a placement was refused.
func (st *state) placementDue(now time.Time) bool {
	return st.retry || len(st.blockers) > 0 || (!st.nextStart.IsZero() && !now.Before(st.nextStart))
}

// arrivalsInput is the placement input of an arrivals round: the sessions
// requested since the last round, but those that a fifo queue could hold
// behind an earlier session (one that may block at their priority or
// above), which wait for the next full round. It costs what arrived, not
// the length of the queue: while nothing was freed, a session that waited
// in an earlier round would wait again, and under fifo it lets the
// arrivals pass only if it does not block them (mayBlock).
func (st *state) arrivalsInput(now time.Time, queue placement.ResourceGroup) placement.Input {
	ids := st.arrivals
	st.arrivals = nil
	highest, blocking := st.highestBlocker(queue)
	var pending []*sessionView
	for _, id := range ids {
		s := st.sessions[id]
		switch {
		case s == nil || s.status != domain.StatusPending:
		case blocking && s.priority <= highest:
			st.setMayBlock(s, true) // not tried: like a session blocked in a full round
			st.startsLater(s, now)
		default:
			pending = append(pending, s)
			st.startsLater(s, now)
		}
	}
	return st.inputOf(now, pending, queue)
}

// highestBlocker is the highest priority of a PENDING session that may
// block the queue, when it is a fifo one and there is such a session.
func (st *state) highestBlocker(queue placement.ResourceGroup) (int, bool) {
	if queue.Order != placement.OrderFIFO || len(st.blockers) == 0 {
		return 0, false
	}
	highest, first := 0, true
	for p := range st.blockers {
		if first || p > highest {
			highest, first = p, false
		}
	}
	return highest, true
}

// inputOf is the placement input for the sessions, with every agent and
// the quota view of the sessions' subjects.
func (st *state) inputOf(now time.Time, sessions []*sessionView, queue placement.ResourceGroup) placement.Input {
	in := placement.Input{Now: now, Ungrouped: queue, Agents: make([]placement.Agent, 0, len(st.agents))}
	if len(sessions) == 0 {
		return in
	}
	owners := make([]quota.Session, 0, len(sessions))
	in.Sessions = make([]placement.Session, 0, len(sessions))
	for _, s := range sessions {
		in.Sessions = append(in.Sessions, st.pendingSession(s))
		if q, ok := st.quotas.Ledger.Session(s.id); ok {
			owners = append(owners, q)
		}
	}
	for _, a := range st.agents {
		in.Agents = append(in.Agents, a.agent())
	}
	in.Quotas = st.quotas.View(owners)
	return in
}

// setMayBlock sets s.mayBlock and keeps the count of blockers.
func (st *state) setMayBlock(s *sessionView, v bool) {
	if s.mayBlock == v {
		return
	}
	s.mayBlock = v
	if v {
		st.blockers[s.priority]++
		return
	}
	if st.blockers[s.priority]--; st.blockers[s.priority] <= 0 {
		delete(st.blockers, s.priority)
	}
}

func (st *state) pendingSession(s *sessionView) placement.Session {
	p := placement.Session{
		ID: s.id, AccessKey: s.owner.AccessKey, UserID: s.owner.UserID, Project: domain.ProjectKey(s.domainName, s.project), Domain: s.domainName,
		ResourceGroup: s.group, Priority: s.priority, EnqueuedAt: s.requestedAt, EnqueuedSeq: s.seq,
		StartsAt: s.startsAt, ClusterMode: s.clusterMode, Architecture: s.architecture, Tries: s.attempts,
	}
	for _, dep := range s.dependencies {
		p.Dependencies = append(p.Dependencies, placement.Dependency{SessionID: dep, State: st.dependencyState(dep)})
	}
	for _, k := range s.kernels {
		p.Kernels = append(p.Kernels, placement.Kernel{ID: k.id, Slots: k.slots})
	}
	return p
}

// dependencyState tells how a session another waits for stands.
func (st *state) dependencyState(id uuid.UUID) placement.DependencyState {
	if _, running := st.sessions[id]; running {
		return placement.DependencyUnfinished
	}
	succeeded, ended := st.ended[id]
	switch {
	case !ended:
		return placement.DependencyUnknown
	case succeeded:
		return placement.DependencySucceeded
	}
	return placement.DependencyFailed
}

// agent is the placement input for an agent: a lost or disconnected one
// is not schedulable (a disconnected one keeps its allocations); occupancy and the devices' used shares are the sums of its
// allocations.
func (a *agentView) agent() placement.Agent {
	out := placement.Agent{ID: a.id, Architecture: a.architecture, Schedulable: !a.unreachable, Capacity: a.capacity, Occupied: domain.Slots{}}
	used := map[string]domain.Quantity{}
	for _, al := range a.allocations {
		out.Occupied = out.Occupied.Add(al.Slots)
		for _, d := range al.Devices {
			used[d.DeviceID] += d.Amount
		}
	}
	for _, d := range a.devices {
		out.Devices = append(out.Devices, placement.Device{ID: d.ID, Kind: d.Kind, Used: used[d.ID]})
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
