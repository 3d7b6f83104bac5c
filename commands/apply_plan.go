package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands/internal/parallel"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// batchWriters bounds the concurrent loads of one batch.
const batchWriters = 32

// batchChunks bounds the concurrent AppendMany calls of one batch, each of
// at most eventstore.MaxStreamsPerAppend streams.
const batchChunks = 4

// planApplier writes placement plans: the sessions, and the agents
// (releaser) whose allocations it makes or gives back.
type planApplier struct {
	sessions repository[*domain.Session]
	releaser
}

// applyPlans is the one plan applier: ScheduleSessions (a scheduling
// round) and ScheduleSession (one placement, the reconcile's) both write
// through it. It writes the placements in three steps:
//
//  1. load every session and decide Schedule (pure): a session no longer
//     PENDING, or a placement that does not match it, is refused;
//  2. per agent (loaded concurrently, or as cmd.Agents knows it), decide the allocations of every
//     session placed there at once (domain.Agent.AllocateEach: each
//     session all or nothing), and append them with the agent's expected
//     revision, many agents per eventstore AppendMany; an agent whose
//     stream moved is re-decided on fresh state and its chunk written
//     again: two writers can never take the same capacity;
//  3. append session.scheduled of every session whose kernels were all
//     allocated, many per AppendMany, with the revision step 1 read; a
//     session whose stream moved is decided again on its own.
//
// A session refused at step 2 on one agent, or at step 3, has what it got
// on other agents released (reason schedule-aborted), as ScheduleSession
// does; the crash window between steps 2 and 3 is the same as
// ScheduleSession's and is repaired the same way (the scheduler's
// reconcile releases allocations of sessions that are not scheduled).
func (h planApplier) applyPlans(ctx context.Context, md Metadata, at time.Time, cmd ScheduleSessions) (ScheduleSessionsResult, error) {
	res := ScheduleSessionsResult{Refused: map[uuid.UUID]error{}}
	var mu sync.Mutex
	var last atomic.Uint64
	refuse := func(id uuid.UUID, err error) {
		mu.Lock()
		defer mu.Unlock()
		if _, done := res.Refused[id]; !done {
			res.Refused[id] = err
		}
	}
	wrote := func(pos uint64) {
		for {
			cur := last.Load()
			if pos <= cur || last.CompareAndSwap(cur, pos) {
				return
			}
		}
	}

	// 1. Sessions.
	sessions := make([]*batchSession, len(cmd.Placements))
	parallel.Each(ctx, batchWriters, len(cmd.Placements), func(i int) {
		p := cmd.Placements[i]
		if p.Known != nil {
			placed, reqs, err := knownPlacement(p)
			if err != nil {
				refuse(p.SessionID, err)
				return
			}
			sessions[i] = &batchSession{p: p, placed: placed, revision: p.Known.Revision, requests: reqs}
			return
		}
		l, err := h.sessions.load(ctx, domain.SessionStream(p.SessionID))
		if err != nil {
			refuse(p.SessionID, err)
			return
		}
		events, err := l.agg.Schedule(p.Kernels, at)
		if err != nil {
			refuse(p.SessionID, err)
			return
		}
		if len(events) == 0 { // scheduled already, with this placement
			mu.Lock()
			res.Scheduled = append(res.Scheduled, p.SessionID)
			mu.Unlock()
			wrote(l.position) // the state it observed
			return
		}
		placed := events[0].(domain.SessionScheduled).Kernels
		sessions[i] = &batchSession{p: p, placed: placed, revision: l.revision, requests: allocationRequests(l.agg, placed)}
	})

	// 2. Agents: each session's kernels there, in the placements' order.
	byAgent := map[string]*agentWrite{}
	var agents []*agentWrite
	for _, d := range sessions {
		if d == nil {
			continue
		}
		for id, reqs := range d.requests {
			w := byAgent[id]
			if w == nil {
				w = &agentWrite{id: id, known: knownAgent(cmd.Agents, id)}
				byAgent[id] = w
				agents = append(agents, w)
			}
			w.sessions = append(w.sessions, d)
			w.batches = append(w.batches, reqs)
		}
	}
	slices.SortFunc(agents, func(a, b *agentWrite) int { return strings.Compare(a.id, b.id) })
	parallel.Each(ctx, batchWriters, len(agents), func(i int) { agents[i].decide(ctx, h.agents, at) })
	var toWrite []*agentWrite
	for _, w := range agents {
		if w.err == nil && len(w.events) > 0 {
			toWrite = append(toWrite, w)
		}
	}
	agentChunks := chunks(toWrite)
	parallel.Each(ctx, batchChunks, len(agentChunks), func(i int) { h.writeAgents(ctx, md, agentChunks[i], at) })
	allocatedOn := map[uuid.UUID][]string{} // session → agents that allocated it
	for _, w := range agents {
		wrote(w.position)
		for j, d := range w.sessions {
			switch {
			case w.err != nil:
				if appendUncertain(w.err) {
					// The append may have been written: release on this
					// agent too (releasing is idempotent).
					allocatedOn[d.p.SessionID] = append(allocatedOn[d.p.SessionID], w.id)
				}
				refuse(d.p.SessionID, w.err)
			case w.outcome[j] != nil:
				refuse(d.p.SessionID, w.outcome[j])
			default:
				allocatedOn[d.p.SessionID] = append(allocatedOn[d.p.SessionID], w.id)
			}
		}
	}

	// 3. Sessions whose every agent allocated them.
	var ready []*batchSession
	var aborts []release
	for _, d := range sessions {
		if d == nil {
			continue
		}
		if _, refused := res.Refused[d.p.SessionID]; refused {
			aborts = append(aborts, releasesOf(d.p, allocatedOn[d.p.SessionID])...)
			continue
		}
		ready = append(ready, d)
	}
	sessionChunks := chunks(ready)
	parallel.Each(ctx, batchChunks, len(sessionChunks), func(i int) { h.writeSessions(ctx, md, sessionChunks[i], at) })
	for _, d := range ready {
		if d.err != nil {
			refuse(d.p.SessionID, d.err)
			if !d.keep {
				aborts = append(aborts, releasesOf(d.p, allocatedOn[d.p.SessionID])...)
			}
			continue
		}
		wrote(d.position)
		res.Scheduled = append(res.Scheduled, d.p.SessionID)
	}
	if len(aborts) > 0 {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), compensationTimeout)
		defer cancel()
		pos, err := h.releaseAll(cctx, md, aborts, at)
		wrote(pos)
		if err != nil {
			return res, fmt.Errorf("release the allocations of refused placements: %w", err)
		}
	}
	res.Position = last.Load()
	return res, nil
}

// batchSession is a session of the batch, decided at step 1.
type batchSession struct {
	p SessionPlacement
	// placed is the placement as session.scheduled records it.
	placed []domain.KernelPlacement
	// revision is its stream's, as read or as known.
	revision int64
	// requests are its kernels' allocations, by agent.
	requests map[string][]domain.AllocationRequest

	// Step 3's outcome: the position of session.scheduled, or why it was
	// not written; keep says the allocations stay all the same (the
	// session may be scheduled: it could not be read back).
	position uint64
	err      error
	keep     bool
}

// agentWrite is one agent's part of step 2.
type agentWrite struct {
	id string
	// known is the agent as the caller folded it (nil: read its stream).
	known *domain.Agent
	// sessions placed on the agent, with their kernels there (batches).
	sessions []*batchSession
	batches  [][]domain.AllocationRequest

	// The decision on the agent as loaded: events to append expecting
	// revision, and per session why it was refused there.
	revision int64
	events   []domain.Event
	outcome  []error
	decided  int
	// wait spaces the decisions after conflicts (the retry policy).
	wait backoff.BackOff
	// err is a failed load or append (outcome then means nothing);
	// position is the append's.
	err      error
	position uint64
}

// decide loads the agent and decides its allocations: the first time on
// the agent the caller knows, if any; on a retry on its stream.
func (w *agentWrite) decide(ctx context.Context, agents repository[*domain.Agent], at time.Time) {
	w.decided++
	if w.decided == 1 && w.known != nil {
		w.revision = w.known.Revision()
		w.events, w.outcome = w.known.AllocateEach(w.batches, at)
		return
	}
	l, err := agents.load(ctx, domain.AgentStream(w.id))
	if err != nil {
		w.err = err
		return
	}
	w.revision = l.revision
	w.events, w.outcome = l.agg.AllocateEach(w.batches, at)
}

// knownAgent is the agent of id the caller folded, when it has one that
// registered.
func knownAgent(agents map[string]*domain.Agent, id string) *domain.Agent {
	if a := agents[id]; a != nil && a.Exists() && a.ID() == id {
		return a
	}
	return nil
}

// writeAgents appends the allocations of a chunk of agents in one
// AppendMany. An agent whose stream moved is decided again on fresh state
// (up to the retry policy's attempts, then its sessions are refused) and
// the chunk written again; any other failure fails every agent of it.
func (h planApplier) writeAgents(ctx context.Context, md Metadata, chunk []*agentWrite, at time.Time) {
	pending := slices.Clone(chunk)
	for len(pending) > 0 {
		parts := make([]streamWrite, len(pending))
		for i, w := range pending {
			parts[i] = streamWrite{stream: domain.AgentStream(w.id), revision: w.revision, events: w.events}
		}
		res, err := appendBatch(ctx, h.agents.store, md, parts)
		if err == nil {
			for i, w := range pending {
				w.position = res[i].Position
			}
			return
		}
		i := conflicted(err, parts)
		if i < 0 {
			for _, w := range pending {
				w.err = err
			}
			return
		}
		w := pending[i]
		if w.decided >= h.agents.retry.attempts {
			w.err = &domain.Error{Op: "session.schedule-batch", Kind: domain.KindConflict, Err: err,
				Message: fmt.Sprintf("gave up after %d attempts against concurrent writers", w.decided)}
		} else {
			if w.wait == nil {
				w.wait = h.agents.retry.newBackOff(ctx)
			}
			if werr := waitNext(ctx, w.wait); werr != nil {
				w.err = storeError("session.schedule-batch", werr)
			} else {
				w.decide(ctx, h.agents, at)
			}
		}
		if w.err != nil || len(w.events) == 0 {
			pending = slices.Delete(pending, i, i+1)
		}
	}
}

// writeSessions appends session.scheduled for a chunk of sessions in one
// AppendMany, each expecting the revision it was decided on. A session
// whose stream moved (cancelled?) leaves the chunk and is decided again on
// its own; any other failure fails every session of it.
func (h planApplier) writeSessions(ctx context.Context, md Metadata, chunk []*batchSession, at time.Time) {
	pending := slices.Clone(chunk)
	for len(pending) > 0 {
		parts := make([]streamWrite, len(pending))
		for i, d := range pending {
			parts[i] = streamWrite{stream: domain.SessionStream(d.p.SessionID), revision: d.revision,
				events: []domain.Event{domain.SessionScheduled{Kernels: d.placed, At: at}}}
		}
		res, err := appendBatch(ctx, h.sessions.store, md, parts)
		if err == nil {
			for i, d := range pending {
				d.position = res[i].Position
			}
			return
		}
		i := conflicted(err, parts)
		if i < 0 {
			for _, d := range pending {
				d.err = err
			}
			if appendUncertain(err) {
				h.readBack(ctx, pending)
			}
			return
		}
		d := pending[i]
		pending = slices.Delete(pending, i, i+1)
		_, d.position, d.err = h.sessions.update(ctx, parts[i].stream, md, func(s *domain.Session) ([]domain.Event, error) {
			return s.Schedule(d.p.Kernels, at)
		})
		if appendUncertain(d.err) {
			h.readBack(ctx, []*batchSession{d})
		}
	}
}

// readBack looks at sessions whose session.scheduled may have been
// written after all (the append's outcome is unknown), even when ctx is
// done: one scheduled with its placement succeeded; one that cannot be
// read keeps its allocations, since a SCHEDULED session without them
// would be worse than a temporary leak (the scheduler's reconcile
// releases them if it is not scheduled); the others stay refused.
func (h planApplier) readBack(ctx context.Context, sessions []*batchSession) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), compensationTimeout)
	defer cancel()
	for _, d := range sessions {
		back, err := h.sessions.load(cctx, domain.SessionStream(d.p.SessionID))
		switch {
		case err != nil:
			d.err, d.keep = errors.Join(d.err, err), true
		case back.agg.HasPlacement(d.placed):
			d.err, d.position = nil, back.position
		}
	}
}

// conflicted returns the index of the part whose expected revision err
// refused, or -1 when err is something else.
func conflicted(err error, parts []streamWrite) int {
	var we *eventstore.WrongExpectedRevisionError
	if !errors.As(err, &we) {
		return -1
	}
	return slices.IndexFunc(parts, func(p streamWrite) bool { return p.stream.String() == we.Stream })
}

// chunks splits items into runs of at most eventstore.MaxStreamsPerAppend.
func chunks[T any](items []T) [][]T {
	return slices.Collect(slices.Chunk(items, eventstore.MaxStreamsPerAppend))
}

// releasesOf are the releases of a placement's kernels on the given agents.
func releasesOf(p SessionPlacement, agents []string) []release {
	var out []release
	for _, k := range p.Kernels {
		if slices.Contains(agents, k.AgentID) {
			out = append(out, release{agentID: k.AgentID, kernelID: k.KernelID, reason: domain.ReasonScheduleAborted})
		}
	}
	return out
}

// knownPlacement checks a placement against the known session (every
// kernel placed once, on an agent) and returns it as session.scheduled
// records it (kernel order, devices sorted: what Session.Schedule
// returns) with its allocation requests by agent. Device amounts are
// checked against the slots by the agents' decisions.
func knownPlacement(p SessionPlacement) ([]domain.KernelPlacement, map[string][]domain.AllocationRequest, error) {
	const op = "session.schedule-batch"
	if len(p.Kernels) != len(p.Known.Kernels) {
		return nil, nil, domain.Errorf(op, domain.KindConflict, "placement of %d kernels for a session of %d", len(p.Kernels), len(p.Known.Kernels))
	}
	byKernel := make(map[uuid.UUID]domain.KernelPlacement, len(p.Kernels))
	for _, k := range p.Kernels {
		if _, dup := byKernel[k.KernelID]; dup || k.AgentID == "" {
			return nil, nil, domain.Errorf(op, domain.KindConflict, "kernel %s is placed twice or has no agent", k.KernelID)
		}
		byKernel[k.KernelID] = k
	}
	placed := make([]domain.KernelPlacement, len(p.Known.Kernels))
	reqs := map[string][]domain.AllocationRequest{}
	for i, k := range p.Known.Kernels {
		kp, ok := byKernel[k.ID]
		if !ok {
			return nil, nil, domain.Errorf(op, domain.KindConflict, "kernel %s is not placed", k.ID)
		}
		devices := slices.Clone(kp.Devices)
		slices.SortFunc(devices, func(a, b domain.DeviceShare) int { return strings.Compare(a.DeviceID, b.DeviceID) })
		placed[i] = domain.KernelPlacement{KernelID: k.ID, AgentID: kp.AgentID, Devices: devices}
		reqs[kp.AgentID] = append(reqs[kp.AgentID], domain.AllocationRequest{KernelID: k.ID, SessionID: p.SessionID, Slots: k.Slots, Devices: devices})
	}
	return placed, reqs, nil
}
