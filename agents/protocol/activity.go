package protocol

import (
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Activity signals: what inside a kernel showed that someone uses its
// session. Each alone keeps the session from idling out.
const (
	// SignalNotebook: a Jupyter kernel of the kernel's jupyter app was busy
	// or active since the agent last looked.
	SignalNotebook = "notebook"
	// SignalTerminal: a terminal of the kernel had input or output since
	// the agent last looked.
	SignalTerminal = "terminal"
	// SignalGPU: the kernel's GPUs were used at or above the agent's
	// threshold on average over its window.
	SignalGPU = "gpu"
)

var knownSignals = map[string]bool{SignalNotebook: true, SignalTerminal: true, SignalGPU: true}

// KernelActivity tells the manager that a kernel showed use
// (kernel.activity, agent → manager): at most one per session per activity
// interval, only when there was some. The manager records it in the audit
// trail about the session, which is what the idle limit counts as use.
type KernelActivity struct {
	SessionID uuid.UUID `json:"session_id"`
	KernelID  uuid.UUID `json:"kernel_id"`
	AgentID   string    `json:"agent_id"`
	// Signals are the signals seen (SignalNotebook, SignalTerminal,
	// SignalGPU), sorted, none twice, at least one.
	Signals    []string  `json:"signals"`
	ObservedAt time.Time `json:"observed_at"`
}

func (KernelActivity) MessageType() string { return TypeKernelActivity }
func (m KernelActivity) Agent() string     { return m.AgentID }
func (m KernelActivity) Kernel() uuid.UUID { return m.KernelID }

// Validate reports every problem at once.
func (m KernelActivity) Validate() error {
	c := newChecker(TypeKernelActivity)
	c.id("session_id", m.SessionID)
	c.id("kernel_id", m.KernelID)
	c.agentID(m.AgentID)
	switch {
	case len(m.Signals) == 0:
		c.bad("signals", "at least one signal")
	case len(m.Signals) > len(knownSignals):
		c.bad("signals", "at most %d signals", len(knownSignals))
	case !slices.IsSorted(m.Signals) || len(slices.Compact(slices.Clone(m.Signals))) != len(m.Signals):
		c.bad("signals", "must be sorted, none twice")
	}
	for i, s := range m.Signals {
		if !knownSignals[s] {
			c.bad(fmt.Sprintf("signals[%d]", i), "unknown signal %q", s)
		}
	}
	c.time("observed_at", m.ObservedAt)
	return c.err()
}
