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

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands/internal/parallel"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// ScheduleSessions is a scheduling round's placements, written together:
// what ScheduleSession does for one session, for thousands, with one
// append per agent instead of one per kernel.
type ScheduleSessions struct {
	Placements []SessionPlacement
}

// SessionPlacement is one session's placement: every kernel's agent and
// devices.
type SessionPlacement struct {
	SessionID uuid.UUID
	Kernels   []domain.KernelPlacement
	// Known, when set, is the session as the caller folded it from the
	// log: the handler then does not read the session's stream, and the
	// append expects Known.Revision, so the placement is written only if
	// the session is still exactly what the caller decided on (else it is
	// decided again on the stream).
	Known *KnownSession
}

// KnownSession is a PENDING session as a process manager folded it: the
// revision of its stream and its kernels, in order.
type KnownSession struct {
	Revision int64
	Kernels  []KnownKernel
}

// KnownKernel is a kernel's id and requested slots.
type KnownKernel struct {
	ID    uuid.UUID
	Slots domain.Slots
}

// sessionWriters bounds the concurrent session appends of a batch: many,
// so that the store's group commit writes them in few transactions.
const sessionWriters = 256

func (ScheduleSessions) CommandName() string { return "session.schedule-batch" }

// ScheduleSessionsResult tells what became of each placement.
type ScheduleSessionsResult struct {
	// Position is the last position written.
	Position uint64
	// Scheduled are the sessions now scheduled with their placement.
	Scheduled []uuid.UUID
	// Refused are the others, with why (the state moved under the
	// decision: the next round decides again).
	Refused map[uuid.UUID]error
}

// batchWriters bounds the concurrent loads and appends of one batch.
const batchWriters = 32

type scheduleSessionsHandler struct{ deps }

// Handle writes a round's placements in three steps:
//
//  1. load every session and decide Schedule (pure): a session no longer
//     PENDING, or a placement that does not match it, is refused;
//  2. per agent (concurrently), decide the allocations of every session
//     placed there at once (domain.Agent.AllocateEach: each session all or
//     nothing) and append them in one append with the agent's expected
//     revision, re-deciding with fresh state on a conflict: two writers
//     can never take the same capacity;
//  3. per session whose kernels were all allocated (concurrently), append
//     session.scheduled with the revision step 1 read (re-deciding on a
//     conflict).
//
// A session refused at step 2 on one agent, or at step 3, has what it got
// on other agents released (reason schedule-aborted), as ScheduleSession
// does; the crash window between steps 2 and 3 is the same as
// ScheduleSession's and is repaired the same way (the scheduler's
// reconcile releases allocations of sessions that are not scheduled).
func (h scheduleSessionsHandler) Handle(ctx context.Context, md Metadata, cmd ScheduleSessions) (ScheduleSessionsResult, error) {
	at := h.now()
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
		l, err := h.sessions.load(ctx, SessionStream(p.SessionID))
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
			return
		}
		placed := events[0].(domain.SessionScheduled).Kernels
		sessions[i] = &batchSession{p: p, placed: placed, revision: l.revision, requests: allocationRequests(l.agg, placed)}
	})

	// 2. Agents: each session's kernels there, in the placements' order.
	byAgent := map[string][]*batchSession{}
	var agents []string
	for _, d := range sessions {
		if d == nil {
			continue
		}
		for id := range d.requests {
			if byAgent[id] == nil {
				agents = append(agents, id)
			}
			byAgent[id] = append(byAgent[id], d)
		}
	}
	slices.Sort(agents)
	allocatedOn := map[uuid.UUID][]string{} // session → agents that allocated it
	parallel.Each(ctx, batchWriters, len(agents), func(i int) {
		id := agents[i]
		outcome, pos, err := h.allocateOn(ctx, md, id, byAgent[id], at)
		wrote(pos)
		mu.Lock()
		defer mu.Unlock()
		for j, d := range byAgent[id] {
			switch {
			case err != nil:
				// The append failed and may have been written: release on
				// this agent too (releasing is idempotent).
				allocatedOn[d.p.SessionID] = append(allocatedOn[d.p.SessionID], id)
				if _, ok := res.Refused[d.p.SessionID]; !ok {
					res.Refused[d.p.SessionID] = err
				}
			case outcome[j] != nil:
				if _, ok := res.Refused[d.p.SessionID]; !ok {
					res.Refused[d.p.SessionID] = outcome[j]
				}
			default:
				allocatedOn[d.p.SessionID] = append(allocatedOn[d.p.SessionID], id)
			}
		}
	})

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
	parallel.Each(ctx, sessionWriters, len(ready), func(i int) {
		d := ready[i]
		stream := SessionStream(d.p.SessionID)
		pos, err := h.sessions.appendExpecting(ctx, stream, d.revision, md, []domain.Event{domain.SessionScheduled{Kernels: d.placed, At: at}})
		if errors.Is(err, eventstore.ErrWrongExpectedRevision) {
			// The session changed since step 1 (cancelled?): decide again.
			_, pos, err = h.sessions.update(ctx, stream, md, func(s *domain.Session) ([]domain.Event, error) {
				return s.Schedule(d.p.Kernels, at)
			})
		}
		if err != nil {
			refuse(d.p.SessionID, err)
			mu.Lock()
			aborts = append(aborts, releasesOf(d.p, allocatedOn[d.p.SessionID])...)
			mu.Unlock()
			return
		}
		wrote(pos)
		mu.Lock()
		res.Scheduled = append(res.Scheduled, d.p.SessionID)
		mu.Unlock()
	})
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
}

// allocateOn allocates the batch's sessions on one agent in one append,
// each all or nothing (outcome[i] is why session i was refused there),
// re-deciding on fresh state when the agent's stream moved. err is a
// failed append (outcome then means nothing).
func (h scheduleSessionsHandler) allocateOn(ctx context.Context, md Metadata, agentID string, sessions []*batchSession, at time.Time) (outcome []error, pos uint64, err error) {
	stream := AgentStream(agentID)
	batches := make([][]domain.AllocationRequest, len(sessions))
	for i, d := range sessions {
		batches[i] = d.requests[agentID]
	}
	for attempt := 1; ; attempt++ {
		l, err := h.agents.load(ctx, stream)
		if err != nil {
			return nil, 0, err
		}
		events, outcome := l.agg.AllocateEach(batches, at)
		if len(events) == 0 {
			return outcome, 0, nil
		}
		pos, err := h.agents.appendAt(ctx, stream, l, md, events)
		if err == nil {
			return outcome, pos, nil
		}
		if !errors.Is(err, eventstore.ErrWrongExpectedRevision) || attempt >= h.agents.retry.attempts {
			return nil, 0, err
		}
		if werr := h.agents.retry.wait(ctx, attempt); werr != nil {
			return nil, 0, storeError("session.schedule-batch", werr)
		}
	}
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
