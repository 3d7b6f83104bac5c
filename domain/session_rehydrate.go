package domain

import (
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// RehydrateSession folds a session stream's events, in revision order from
// 0, into the session. No events gives a session that does not exist
// (revision -1). Folding only records facts: it never re-checks the rules
// the decisions enforced, but refuses a stream that cannot be a session's
// (an event before session.requested, an unknown kernel, a foreign event
// type) with a KindInternal error.
func RehydrateSession(events []RecordedEvent) (*Session, error) {
	const op = "session.rehydrate"
	events, err := foldable(op, events)
	if err != nil {
		return nil, err
	}
	s := &Session{revision: -1}
	for _, re := range events {
		if err := s.apply(re.Event); err != nil {
			return nil, &Error{Op: op, Kind: KindInternal, Message: fmt.Sprintf("revision %d (%s)", re.Revision, re.Event.EventType()), Err: err}
		}
		s.revision = re.Revision
	}
	return s, nil
}

// apply folds one event. It is deterministic: times come from the events.
func (s *Session) apply(ev Event) error {
	if _, first := ev.(SessionRequested); first == s.exists {
		if first {
			return fmt.Errorf("session requested twice")
		}
		return fmt.Errorf("event before session.requested")
	}
	switch e := ev.(type) {
	case SessionRequested:
		s.applyRequested(e)
	case SessionPendingUpdated:
		s.statusReason = e.Reason
		s.pendingDetails = append([]string(nil), e.Details...)
		s.pendingTries = e.Tries
	case SessionScheduled:
		for _, p := range e.Kernels {
			i := s.kernelIndex(p.KernelID)
			if i < 0 {
				return fmt.Errorf("unknown kernel %s", p.KernelID)
			}
			k := &s.kernels[i]
			k.agentID, k.devices = p.AgentID, sortedShares(p.Devices)
			k.status, k.statusReason = StatusScheduled, e.Reason
		}
		s.setStatus(StatusScheduled, e.Reason)
		s.pendingDetails = nil
		s.scheduledAt = e.At
	case SessionStatusChanged:
		s.setStatus(e.Status, e.Reason)
		if e.Status == StatusRunning && s.startedAt.IsZero() {
			s.startedAt = e.At
		}
	case SessionTerminating:
		s.setStatus(StatusTerminating, e.Reason)
	case SessionTerminated:
		s.setStatus(StatusTerminated, e.Reason)
		s.result = e.Result
		if e.ExitCode != nil {
			code := *e.ExitCode
			s.exitCode = &code
		}
		s.terminatedAt = e.At
	case SessionCancelled:
		s.endKernels(StatusCancelled, e.Reason)
		s.setStatus(StatusCancelled, e.Reason)
		s.terminatedAt = e.At
	case SessionErrored:
		s.endKernels(StatusError, e.Reason)
		s.setStatus(StatusError, e.Reason)
		s.terminatedAt = e.At
	case SessionDisconnected:
		s.applyDisconnected(e)
	case SessionReconnected:
		s.applyReconnected(e)
	default:
		return s.applyKernelEvent(ev)
	}
	return nil
}

func (s *Session) applyRequested(e SessionRequested) {
	s.exists = true
	s.id = e.SessionID
	s.name = e.Name
	s.owner = e.Owner
	s.domainName = e.Domain
	s.project = e.Project
	s.resourceGroup = e.ResourceGroup
	s.typ = e.Type
	s.image = e.Image
	s.command = e.Command
	s.env = make(map[string]string, len(e.Env))
	for k, v := range e.Env {
		s.env[k] = v
	}
	s.priority = e.Priority
	s.clusterMode = e.ClusterMode
	s.kernels = make([]Kernel, len(e.Kernels))
	for i, k := range e.Kernels {
		s.kernels[i] = Kernel{id: k.KernelID, role: k.Role, requested: k.Slots.Clone(), status: StatusPending}
	}
	s.status = StatusPending
	s.requestedAt = e.At
	s.startsAt = e.StartsAt
	s.dependencies = append([]uuid.UUID(nil), e.Dependencies...)
	s.architecture = e.Architecture
}

// applyKernelEvent folds the events about one kernel.
func (s *Session) applyKernelEvent(ev Event) error {
	var (
		id     uuid.UUID
		status SessionStatus
		reason string
	)
	switch e := ev.(type) {
	case KernelPullProgressed, KernelAppsReady:
		return s.applyKernelDetail(ev)
	case KernelPreparing:
		id, status, reason = e.KernelID, StatusPreparing, ReasonKernelPreparing
	case KernelPulling:
		id, status, reason = e.KernelID, StatusPulling, ReasonKernelPulling
	case KernelPrepared:
		id, status, reason = e.KernelID, StatusPrepared, ReasonKernelPrepared
	case KernelCreating:
		id, status, reason = e.KernelID, StatusCreating, ReasonKernelCreating
	case KernelRunning:
		id, status, reason = e.KernelID, StatusRunning, ReasonKernelStarted
	case KernelExited:
		id, status, reason = e.KernelID, StatusTerminated, e.Reason
	case KernelTerminated:
		id, status, reason = e.KernelID, StatusTerminated, e.Reason
	case KernelErrored:
		id, status, reason = e.KernelID, StatusError, e.Reason
	default:
		return fmt.Errorf("event type %q does not belong to a session stream", ev.EventType())
	}
	i := s.kernelIndex(id)
	if i < 0 {
		return fmt.Errorf("unknown kernel %s", id)
	}
	k := &s.kernels[i]
	k.status, k.statusReason = status, reason
	switch e := ev.(type) {
	case KernelRunning:
		k.containerID = e.ContainerID
		k.servicePorts = slices.Clone(e.ServicePorts)
	case KernelExited:
		code := e.ExitCode
		k.exitCode = &code
	}
	return nil
}

// applyKernelDetail folds an event about a kernel's progress within its
// phase; the kernel's status stays.
func (s *Session) applyKernelDetail(ev Event) error {
	var id uuid.UUID
	switch e := ev.(type) {
	case KernelPullProgressed:
		id = e.KernelID
	case KernelAppsReady:
		id = e.KernelID
	}
	i := s.kernelIndex(id)
	if i < 0 {
		return fmt.Errorf("unknown kernel %s", id)
	}
	s.kernels[i].applyDetail(ev)
	return nil
}

// setStatus moves the session to status. Any status but DISCONNECTED
// ends a disconnection: the session is back, torn down or over.
func (s *Session) setStatus(status SessionStatus, reason string) {
	s.status, s.statusReason = status, reason
	if status != StatusDisconnected {
		s.disconnectedFrom, s.resumeStatus, s.resumeReason = nil, "", ""
	}
}

// endKernels moves every kernel that has not ended to status: a cancelled
// session's kernels are cancelled, an errored session's kernels are
// errored (their containers are torn down when the allocations go).
func (s *Session) endKernels(status SessionStatus, reason string) {
	for i := range s.kernels {
		if k := &s.kernels[i]; !k.status.IsTerminal() {
			k.status, k.statusReason = status, reason
		}
	}
}
