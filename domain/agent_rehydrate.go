package domain

import (
	"fmt"

	"github.com/google/uuid"
)

// RehydrateAgent folds an agent stream's events, in revision order from 0,
// into the agent. No events gives an agent that never registered
// (revision -1). A stream that cannot be an agent's (an event before
// agent.registered, a kernel allocated twice or released without an
// allocation, a foreign event type) is a KindInternal error.
func RehydrateAgent(events []RecordedEvent) (*Agent, error) {
	const op = "agent.rehydrate"
	events, err := foldable(op, events)
	if err != nil {
		return nil, err
	}
	a := &Agent{revision: -1, allocations: map[uuid.UUID]Allocation{}}
	for _, re := range events {
		if err := a.apply(re.Event); err != nil {
			return nil, &Error{Op: op, Kind: KindInternal, Message: fmt.Sprintf("revision %d (%s)", re.Revision, re.Event.EventType()), Err: err}
		}
		a.revision = re.Revision
	}
	return a, nil
}

func (a *Agent) apply(ev Event) error {
	if _, registered := ev.(AgentRegistered); !registered && !a.exists {
		return fmt.Errorf("event before agent.registered")
	}
	switch e := ev.(type) {
	case AgentRegistered:
		if !a.exists {
			a.exists, a.id, a.status, a.registeredAt = true, e.AgentID, AgentStatusAlive, e.At
		}
		a.architecture = e.Architecture
		a.capacity = e.Capacity.Clone()
		a.devices = append([]Device(nil), e.Devices...)
		a.sealKey = e.SealKey
	case AgentAllocated:
		if _, dup := a.allocations[e.KernelID]; dup {
			return fmt.Errorf("kernel %s allocated twice", e.KernelID)
		}
		a.allocations[e.KernelID] = Allocation{
			KernelID: e.KernelID, SessionID: e.SessionID, Slots: e.Slots.Clone(),
			Devices: sortedShares(e.Devices), At: e.At,
		}
	case AgentReleased:
		if _, ok := a.allocations[e.KernelID]; !ok {
			return fmt.Errorf("kernel %s released without an allocation", e.KernelID)
		}
		delete(a.allocations, e.KernelID)
	case AgentLost:
		a.status, a.lostAt = AgentStatusLost, e.At
	case AgentRejoined:
		a.status = AgentStatusAlive
	case AgentDisconnected:
		a.status, a.disconnectedAt = AgentStatusDisconnected, e.At
	case AgentReconnected:
		a.status = AgentStatusAlive
	default:
		return fmt.Errorf("event type %q does not belong to an agent stream", ev.EventType())
	}
	return nil
}

// NewAgent returns an agent that never registered (revision -1), for a
// process that folds an agent stream one event at a time (Fold) as it
// follows the global log.
func NewAgent() *Agent {
	return &Agent{revision: -1, allocations: map[uuid.UUID]Allocation{}}
}

// Fold folds the stream's next event into the agent: RehydrateAgent one
// event at a time. Revision is the stream's revision of the event, which
// Revision then returns (an annotation only moves it). An event the agent
// cannot take (see RehydrateAgent) is a KindInternal error and leaves the
// agent as it was.
func (a *Agent) Fold(re RecordedEvent) error {
	const op = "agent.fold"
	if re.Event == nil {
		return Errorf(op, KindInternal, "revision %d has no payload", re.Revision)
	}
	if re.Revision != a.revision+1 {
		return Errorf(op, KindInternal, "revision %d follows revision %d: revisions must be dense", re.Revision, a.revision)
	}
	if !IsAnnotation(re.Event.EventType()) {
		if err := a.apply(re.Event); err != nil {
			return &Error{Op: op, Kind: KindInternal, Message: fmt.Sprintf("revision %d (%s)", re.Revision, re.Event.EventType()), Err: err}
		}
	}
	a.revision = re.Revision
	return nil
}
