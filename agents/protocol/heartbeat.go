package protocol

import (
	"fmt"
	"time"

	"github.com/google/uuid"
)

// AgentHeartbeat tells the manager the agent is alive (agent.heartbeat,
// agent → manager). The manager declares the agent lost when no heartbeat
// (nor register) came for a few Intervals.
type AgentHeartbeat struct {
	AgentID string `json:"agent_id"`
	// Running are the kernels whose containers run, sorted.
	Running []uuid.UUID `json:"running"`
	// IntervalMillis is how often the agent sends heartbeats, in
	// milliseconds.
	IntervalMillis int64 `json:"interval_ms"`
	// StartedAt is when the agent process started.
	StartedAt time.Time `json:"started_at"`
	// At is when the agent sent this.
	At time.Time `json:"at"`
}

func (AgentHeartbeat) MessageType() string { return TypeAgentHeartbeat }
func (m AgentHeartbeat) Agent() string     { return m.AgentID }

// Interval is IntervalMillis as a duration.
func (m AgentHeartbeat) Interval() time.Duration {
	return time.Duration(m.IntervalMillis) * time.Millisecond
}

// Validate reports every problem at once.
func (m AgentHeartbeat) Validate() error {
	c := newChecker(TypeAgentHeartbeat)
	c.agentID(m.AgentID)
	for i, k := range m.Running {
		c.id(fmt.Sprintf("running[%d]", i), k)
	}
	if m.IntervalMillis <= 0 {
		c.bad("interval_ms", "must be positive")
	}
	c.time("started_at", m.StartedAt)
	c.time("at", m.At)
	return c.err()
}
