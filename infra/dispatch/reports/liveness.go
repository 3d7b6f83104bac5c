package reports

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// liveness knows each agent's status (from the log, and from the
// consumer's own commands) and when each was last heard from (from the
// bus). The bus handler and the check loop share it.
type liveness struct {
	clock func() time.Time

	mu       sync.Mutex
	status   map[string]domain.AgentStatus
	asOf     map[string]uint64 // the log position each status is as of
	lastSeen map[string]time.Time
}

func newLiveness(clock func() time.Time) *liveness {
	return &liveness{clock: clock, status: map[string]domain.AgentStatus{}, asOf: map[string]uint64{}, lastSeen: map[string]time.Time{}}
}

// heard notes a message from the agent.
func (l *liveness) heard(agentID string) {
	now := l.clock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.After(l.lastSeen[agentID]) {
		l.lastSeen[agentID] = now
	}
}

// setStatus records an agent's status as of log position pos: the event
// that made it so, or the last position of the command that did. A status
// from an older position than the one recorded is ignored: the fold of the
// log runs behind the commands this consumer sends itself, and an old
// agent.disconnected folded after a reconnect (or an old agent.reconnected
// after a disconnect) must not undo the newer status. An agent not lost and
// never heard from since this process started (the log is older than the
// process) counts as heard from now: it gets a full timeout.
func (l *liveness) setStatus(agentID string, status domain.AgentStatus, pos uint64) {
	now := l.clock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if pos < l.asOf[agentID] {
		return
	}
	l.asOf[agentID] = pos
	if _, heard := l.lastSeen[agentID]; status != domain.AgentStatusLost && !heard {
		l.lastSeen[agentID] = now
	}
	l.status[agentID] = status
}

// statusOf is the agent's status as the consumer knows it ("" for an agent
// it does not know).
func (l *liveness) statusOf(agentID string) domain.AgentStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.status[agentID]
}

// silent returns, sorted, the agents in status not heard from for longer
// than timeout.
func (l *liveness) silent(status domain.AgentStatus, timeout time.Duration) []string {
	now := l.clock()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, id := range slices.Sorted(maps.Keys(l.status)) {
		if l.status[id] == status && now.Sub(l.lastSeen[id]) > timeout {
			out = append(out, id)
		}
	}
	return out
}

// runLiveness folds the agents' status from the log and, once caught up,
// checks every CheckInterval for silent agents.
func (c *Consumer) runLiveness(ctx context.Context) error {
	sub, err := c.log.Subscribe(ctx, 0)
	if err != nil {
		return stopped(ctx, fmt.Errorf("liveness: subscribe: %w", err))
	}
	defer sub.Close()
	ticker := time.NewTicker(c.cfg.CheckInterval)
	defer ticker.Stop()
	caughtUp := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-sub.Messages():
			if !ok {
				return stopped(ctx, fmt.Errorf("liveness: subscription ended: %w", sub.Err()))
			}
			if msg.CaughtUp {
				caughtUp = true
				continue
			}
			c.foldAgent(msg.Event.Stream, msg.Event.Type, msg.Event.Position)
		case <-ticker.C:
			if caughtUp {
				c.checkSilent(ctx)
			}
		}
	}
}

// foldAgent applies an agent stream's status events.
func (c *Consumer) foldAgent(stream, eventType string, pos uint64) {
	s, err := domain.ParseStreamOf(domain.StreamAgent, stream)
	if err != nil {
		return
	}
	id := s.ID
	switch eventType {
	case domain.TypeAgentRegistered, domain.TypeAgentRejoined, domain.TypeAgentReconnected:
		// agent.registered also records a changed spec of a lost or
		// disconnected agent, but such an agent registering again always
		// rejoins or reconnects in the same append.
		c.live.setStatus(id, domain.AgentStatusAlive, pos)
	case domain.TypeAgentDisconnected:
		c.live.setStatus(id, domain.AgentStatusDisconnected, pos)
	case domain.TypeAgentLost:
		c.live.setStatus(id, domain.AgentStatusLost, pos)
	}
}

// checkSilent declares every alive agent silent past the heartbeat timeout
// disconnected, and gives up every disconnected agent silent past the lost
// timeout. A failure is retried at the next check.
func (c *Consumer) checkSilent(ctx context.Context) {
	md := commands.Metadata{Actor: "system:liveness"}
	for _, id := range c.live.silent(domain.AgentStatusAlive, c.cfg.HeartbeatTimeout) {
		if ctx.Err() != nil {
			return
		}
		res, err := c.handlers.DisconnectAgent.Handle(ctx, md, commands.DisconnectAgent{AgentID: id})
		if err != nil {
			c.logger.Warn("cannot mark a silent agent disconnected", "agent_id", id, "error", err)
			continue
		}
		c.live.setStatus(id, domain.AgentStatusDisconnected, res.Position)
		c.metrics.disconnected.Inc()
		c.logger.Warn("agent disconnected: no heartbeat; its sessions keep their allocations", "agent_id", id,
			"timeout", c.cfg.HeartbeatTimeout, "lost_after", c.cfg.AgentLostTimeout)
	}
	for _, id := range c.live.silent(domain.AgentStatusDisconnected, c.cfg.AgentLostTimeout) {
		if ctx.Err() != nil {
			return
		}
		res, err := c.handlers.MarkAgentLost.Handle(ctx, md, commands.MarkAgentLost{AgentID: id})
		if err != nil {
			c.logger.Warn("cannot mark a silent agent lost", "agent_id", id, "error", err)
			continue
		}
		c.live.setStatus(id, domain.AgentStatusLost, res.Position)
		c.metrics.lost.Inc()
		c.logger.Warn("agent lost: silent past the lost timeout; its sessions are failed", "agent_id", id, "timeout", c.cfg.AgentLostTimeout)
	}
}

// heartbeat brings a disconnected agent back: it is alive again, and each
// of its sessions whose kernel it reports running returns to its phase.
func (c *Consumer) heartbeat(ctx context.Context, md commands.Metadata, m protocol.AgentHeartbeat) error {
	if c.live.statusOf(m.AgentID) != domain.AgentStatusDisconnected {
		return nil
	}
	res, err := c.handlers.ReconnectAgent.Handle(ctx, md, commands.ReconnectAgent{AgentID: m.AgentID, Running: m.Running})
	if err != nil {
		return c.failure(err, "reconnect refused", "agent_id", m.AgentID)
	}
	c.live.setStatus(m.AgentID, domain.AgentStatusAlive, res.Position)
	c.metrics.reconnected.Inc()
	c.logger.Info("agent reconnected", "agent_id", m.AgentID, "running", len(m.Running))
	return nil
}

// stopped returns nil when ctx ended (a requested stop), err otherwise.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
