package scheduler

import (
	"fmt"
	"slices"
	"time"

	"github.com/cairnhq/cairn/commands/quotas"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/google/uuid"
)

// knownTypes are the event types this build decodes; others (types added
// by a newer writer to streams the scheduler does not read) are skipped.
var knownTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range domain.EventTypes() {
		m[t] = true
	}
	return m
}()

// decode returns the domain event of rec when the state folds it, nil when
// it does not (another kind of stream, a type of a newer writer). An event
// of a known type that does not decode is an error: skipping it could make
// the scheduler believe capacity is free that is not.
func decode(rec eventstore.RecordedEvent) (domain.Event, error) {
	s, _ := domain.ParseStream(rec.Stream)
	sessionStream, agentStream := s.Kind == domain.StreamSession, s.Kind == domain.StreamAgent
	if (!sessionStream && !agentStream && !quotas.Wants(rec.Type)) || !knownTypes[rec.Type] {
		return nil, nil
	}
	ev, err := domain.DecodeEvent(rec.Type, rec.Version, rec.Data)
	if err != nil {
		return nil, fmt.Errorf("scheduler: %s@%d: %w", rec.Stream, rec.Revision, err)
	}
	return ev, nil
}

// applyDecoded folds one event of the global log, decoded by decode (nil:
// nothing to fold), into the state and reports whether it may let a
// session that already waited be placed (a full round is due): an agent
// (re)joining, capacity given back, a session ending, a limit changing.
// A new session is recorded among the arrivals instead.
func (st *state) applyDecoded(rec eventstore.RecordedEvent, ev domain.Event) (wake bool, err error) {
	st.position = rec.Position
	if ev == nil {
		return false, nil
	}
	s, _ := domain.ParseStream(rec.Stream)
	sessionStream, agentStream := s.Kind == domain.StreamSession, s.Kind == domain.StreamAgent
	if quotas.Wants(rec.Type) {
		if err := st.quotas.Apply(rec.Stream, ev); err != nil {
			return false, fmt.Errorf("scheduler: %s@%d: %w", rec.Stream, rec.Revision, err)
		}
		if !sessionStream && !agentStream {
			// A limit changed: a waiting session may fit now.
			return true, nil
		}
	}
	if agentStream {
		id := s.ID
		wake = st.applyAgent(id, ev)
		if a := st.agents[id]; a != nil && a.agg != nil && a.agg.Fold(domain.RecordedEvent{Revision: rec.Revision, Event: ev}) != nil {
			a.agg = nil
		}
		return wake, nil
	}
	id, err := s.UUID()
	if err != nil {
		return false, nil // not a session stream of ours
	}
	wake = st.applySession(id, rec.Position, ev)
	if sv := st.sessions[id]; sv != nil {
		sv.revision = rec.Revision
	}
	return wake, nil
}

func (st *state) applyAgent(id string, ev domain.Event) bool {
	a := st.agents[id]
	if a == nil {
		a = &agentView{id: id, allocations: map[uuid.UUID]domain.Allocation{}, agg: domain.NewAgent()}
		st.agents[id] = a
	}
	switch e := ev.(type) {
	case domain.AgentRegistered:
		a.architecture = e.Architecture
		a.capacity = e.Capacity.Clone()
		a.devices = slices.Clone(e.Devices)
		return true
	case domain.AgentRejoined:
		a.unreachable, a.backAt = false, e.At
		return true
	case domain.AgentReconnected:
		a.unreachable, a.backAt = false, e.At
		return true
	case domain.AgentLost, domain.AgentDisconnected:
		a.unreachable = true
	case domain.AgentAllocated:
		a.allocations[e.KernelID] = domain.Allocation{
			KernelID: e.KernelID, SessionID: e.SessionID, Slots: e.Slots.Clone(),
			Devices: slices.Clone(e.Devices), At: e.At,
		}
	case domain.AgentReleased:
		delete(a.allocations, e.KernelID)
		return true
	}
	return false
}

func (st *state) applySession(id uuid.UUID, position uint64, ev domain.Event) bool {
	if e, ok := ev.(domain.SessionRequested); ok {
		s := &sessionView{
			id: id, owner: e.Owner, domainName: e.Domain, project: e.Project, group: e.ResourceGroup,
			priority: e.Priority, clusterMode: e.ClusterMode, requestedAt: e.At, seq: position,
			startsAt: e.StartsAt, dependencies: slices.Clone(e.Dependencies), architecture: e.Architecture,
			status: domain.StatusPending, since: e.At,
		}
		for _, k := range e.Kernels {
			s.kernels = append(s.kernels, kernelView{id: k.KernelID, slots: k.Slots.Clone(), status: domain.StatusPending})
		}
		st.sessions[id] = s
		st.arrivals = append(st.arrivals, id)
		return false
	}
	s := st.sessions[id]
	if s == nil {
		return false // ended, or a stream that began before ours did
	}
	switch e := ev.(type) {
	case domain.SessionPendingUpdated:
		s.statusReason, s.pendingDetails = e.Reason, slices.Clone(e.Details)
		s.attempts = max(s.attempts, e.Tries)
	case domain.SessionScheduled:
		for _, p := range e.Kernels {
			if k := s.kernel(p.KernelID); k != nil {
				k.agentID, k.status = p.AgentID, domain.StatusScheduled
			}
		}
		s.setStatus(domain.StatusScheduled, e.Reason, e.At)
	case domain.SessionStatusChanged:
		s.setStatus(e.Status, e.Reason, e.At)
	case domain.SessionTerminating:
		s.setStatus(domain.StatusTerminating, e.Reason, e.At)
	case domain.SessionDisconnected:
		if s.status != domain.StatusDisconnected {
			s.setStatus(domain.StatusDisconnected, e.Reason, e.At)
		}
		if !slices.Contains(s.awaiting, e.AgentID) {
			s.awaiting = append(s.awaiting, e.AgentID)
		}
	case domain.SessionReconnected:
		s.awaiting = slices.DeleteFunc(s.awaiting, func(id string) bool { return id == e.AgentID })
		if e.Status != "" {
			// Back in its phase: its deadline counts afresh from now.
			s.setStatus(e.Status, e.Reason, e.At)
		}
	case domain.SessionTerminated:
		st.setMayBlock(s, false)
		delete(st.sessions, id)
		st.ended[id] = e.Result == domain.ResultSuccess
		return true // a session waiting for it may start
	case domain.SessionCancelled, domain.SessionErrored:
		st.setMayBlock(s, false)
		delete(st.sessions, id)
		st.ended[id] = false
		return true
	default:
		s.applyKernel(ev)
	}
	if s.status != domain.StatusPending {
		st.setMayBlock(s, false)
	}
	return false
}

func (s *sessionView) setStatus(status domain.SessionStatus, reason string, at time.Time) {
	s.status, s.statusReason, s.pendingDetails, s.since = status, reason, nil, at
	if status != domain.StatusDisconnected {
		s.awaiting = nil
	}
}

func (s *sessionView) applyKernel(ev domain.Event) {
	var (
		id     uuid.UUID
		status domain.SessionStatus
	)
	switch e := ev.(type) {
	case domain.KernelPreparing:
		id, status = e.KernelID, domain.StatusPreparing
	case domain.KernelPulling:
		id, status = e.KernelID, domain.StatusPulling
	case domain.KernelPrepared:
		id, status = e.KernelID, domain.StatusPrepared
	case domain.KernelCreating:
		id, status = e.KernelID, domain.StatusCreating
	case domain.KernelRunning:
		id, status = e.KernelID, domain.StatusRunning
	case domain.KernelExited:
		id, status = e.KernelID, domain.StatusTerminated
	case domain.KernelTerminated:
		id, status = e.KernelID, domain.StatusTerminated
	case domain.KernelErrored:
		id, status = e.KernelID, domain.StatusError
	default:
		return
	}
	if k := s.kernel(id); k != nil {
		k.status = status
	}
}

func (s *sessionView) kernel(id uuid.UUID) *kernelView {
	for i := range s.kernels {
		if s.kernels[i].id == id {
			return &s.kernels[i]
		}
	}
	return nil
}
