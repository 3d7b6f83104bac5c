package domain

import "time"

// Disconnect records that an alive agent has been silent for longer than
// the heartbeat timeout. Unlike MarkLost it releases nothing: a node that
// rebooted or lost its network for a while most likely still runs its
// kernels, which still hold their devices. The sessions holding
// allocations on it are marked disconnected too (Session.Disconnect, see
// commands.DisconnectAgent). A disconnected or lost agent returns no
// events.
func (a *Agent) Disconnect(reason string, at time.Time) ([]Event, error) {
	const op = "agent.disconnect"
	switch {
	case !a.exists:
		return nil, a.notFound(op)
	case reason == "":
		return nil, Invalid(op, "reason", "required")
	case at.IsZero():
		return nil, Invalid(op, "at", "must be set")
	case a.status != AgentStatusAlive:
		return nil, nil
	}
	return []Event{AgentDisconnected{Reason: reason, At: at}}, nil
}

// Reconnect records that a disconnected agent was heard from again (a
// heartbeat): it is alive and takes new allocations again. An alive agent
// returns no events; a lost one is KindConflict, since it was given up on
// and must register again (Register rejoins it).
func (a *Agent) Reconnect(at time.Time) ([]Event, error) {
	const op = "agent.reconnect"
	switch {
	case !a.exists:
		return nil, a.notFound(op)
	case at.IsZero():
		return nil, Invalid(op, "at", "must be set")
	case a.status == AgentStatusLost:
		return nil, Errorf(op, KindConflict, "agent %s is lost: it must register again", a.id)
	case a.status == AgentStatusAlive:
		return nil, nil
	}
	return []Event{AgentReconnected{At: at}}, nil
}
