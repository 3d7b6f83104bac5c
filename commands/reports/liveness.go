package reports

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const agentStreamPrefix = "agent-"

// liveness knows which agents are alive (from the log) and when each was
// last heard from (from the bus). The bus handler and the check loop share
// it.
type liveness struct {
	clock func() time.Time

	mu       sync.Mutex
	alive    map[string]bool
	lastSeen map[string]time.Time
}

func newLiveness(clock func() time.Time) *liveness {
	return &liveness{clock: clock, alive: map[string]bool{}, lastSeen: map[string]time.Time{}}
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

// setAlive records what the log says of an agent. An alive agent never
// heard from since this process started (the log is older than the
// process) counts as heard from now: it gets a full timeout.
func (l *liveness) setAlive(agentID string, alive bool) {
	now := l.clock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, heard := l.lastSeen[agentID]; alive && !heard {
		l.lastSeen[agentID] = now
	}
	l.alive[agentID] = alive
}

// silent returns, sorted, the alive agents not heard from for longer than
// timeout.
func (l *liveness) silent(timeout time.Duration) []string {
	now := l.clock()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, id := range slices.Sorted(maps.Keys(l.alive)) {
		if l.alive[id] && now.Sub(l.lastSeen[id]) > timeout {
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
			c.foldAgent(msg.Event.Stream, msg.Event.Type)
		case <-ticker.C:
			if caughtUp {
				c.markSilentLost(ctx)
			}
		}
	}
}

// foldAgent applies an agent stream's status events.
func (c *Consumer) foldAgent(stream, eventType string) {
	id, ok := strings.CutPrefix(stream, agentStreamPrefix)
	if !ok {
		return
	}
	switch eventType {
	case domain.TypeAgentRegistered, domain.TypeAgentRejoined:
		// agent.registered also records a changed spec of a lost agent, but
		// a lost agent registering again always rejoins in the same append.
		c.live.setAlive(id, true)
	case domain.TypeAgentLost:
		c.live.setAlive(id, false)
	}
}

// markSilentLost declares every silent agent lost. A failure is retried at
// the next check.
func (c *Consumer) markSilentLost(ctx context.Context) {
	for _, id := range c.live.silent(c.cfg.HeartbeatTimeout) {
		if ctx.Err() != nil {
			return
		}
		md := commands.Metadata{Actor: "system:liveness"}
		if _, err := c.handlers.MarkAgentLost.Handle(ctx, md, commands.MarkAgentLost{AgentID: id}); err != nil {
			c.logger.Warn("cannot mark a silent agent lost", "agent_id", id, "error", err)
			continue
		}
		c.live.setAlive(id, false)
		c.logger.Warn("agent lost: no heartbeat", "agent_id", id, "timeout", c.cfg.HeartbeatTimeout)
	}
}

// stopped returns nil when ctx ended (a requested stop), err otherwise.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
