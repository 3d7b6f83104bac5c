package commands

import (
	"context"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// ScheduleSessions is a scheduling round's placements, written together:
// what ScheduleSession does for one session, for thousands, with one
// eventstore AppendMany per few hundred agents or sessions instead of an
// append per kernel.
type ScheduleSessions struct {
	Placements []SessionPlacement
	// Agents, when set, are agents as the caller folded them from the log
	// (domain.Agent.Fold), by id, at their stream's revision: the first
	// decision on such an agent is made on it instead of reading its
	// stream, and the append expects its revision, so it is written only
	// if the agent is still exactly what the decision saw (else it is
	// decided again on the stream). The handler only reads them.
	Agents map[string]*domain.Agent
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

type scheduleSessionsHandler struct {
	planApplier
	clock
}

// newScheduleSessionsHandler builds the handler over what it uses.
func newScheduleSessionsHandler(planApplier planApplier, now clock) scheduleSessionsHandler {
	return scheduleSessionsHandler{planApplier: planApplier, clock: now}
}

// Handle applies the round's placements (see applyPlans).
func (h scheduleSessionsHandler) Handle(ctx context.Context, md Metadata, cmd ScheduleSessions) (ScheduleSessionsResult, error) {
	return h.applyPlans(ctx, md, h.now(), cmd)
}
