package node_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/node"
	"github.com/cairnhq/cairn/agents/protocol"
)

// A running agent reports a kernel's terminal use as kernel.activity
// (signal terminal) for its session, with real Podman and the bus; once
// the terminal is quiet, its looks report nothing more for it.
func TestAgentReportsTerminalActivity(t *testing.T) {
	t.Parallel()
	w := newTerminalWorld(t, func(c *node.Config) { c.ActivityInterval = 100 * time.Millisecond })
	isActivity := func(m protocol.Message) bool {
		a, ok := m.(protocol.KernelActivity)
		return ok && a.KernelID == w.create.KernelID
	}
	mark := w.reports.mark()
	c, _ := w.open(uuid.New(), "")
	c.typeIn("echo $((6*7))\r")
	c.shows("42")
	got := w.reports.await(t, mark, "of terminal activity", isActivity).(protocol.KernelActivity)
	if got.SessionID != w.create.SessionID || got.AgentID != w.agentID || !slices.Equal(got.Signals, []string{protocol.SignalTerminal}) {
		t.Fatalf("activity %+v", got)
	}

	// Quiet: detach and wait for a heartbeat after two more looks; no
	// activity report may follow the last one about the typing.
	_ = c.conn.CloseNow()
	used := w.agent.TerminalActivity(w.create.KernelID)
	quiet := w.reports.mark()
	w.reports.await(t, quiet, "a heartbeat", func(m protocol.Message) bool { _, ok := m.(protocol.AgentHeartbeat); return ok })
	after := w.reports.mark()
	w.reports.await(t, after, "another heartbeat", func(m protocol.Message) bool { _, ok := m.(protocol.AgentHeartbeat); return ok })
	if w.agent.TerminalActivity(w.create.KernelID).Equal(used) {
		if n := w.reports.count(after, isActivity); n != 0 {
			t.Errorf("%d activity reports for a quiet terminal", n)
		}
	}
}
