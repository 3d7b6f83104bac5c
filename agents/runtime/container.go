package runtime

import "time"

// State is a container's lifecycle state, normalised across runtimes.
type State string

const (
	// StateCreated: created (or initialised) but never started.
	StateCreated State = "created"
	// StateRunning: its processes run (this includes a container being
	// stopped that has not exited yet).
	StateRunning State = "running"
	// StatePaused: frozen.
	StatePaused State = "paused"
	// StateExited: it ran and exited; ExitCode and FinishedAt are set.
	StateExited State = "exited"
	// StateRemoving: being removed.
	StateRemoving State = "removing"
	// StateUnknown: the runtime reported a state this port does not know.
	StateUnknown State = "unknown"
)

// Container is what the runtime reports about a kernel's container. The
// kernel, session and agent ids come from its managed labels.
type Container struct {
	ID        string // the runtime's full container id
	Name      string // ContainerName(KernelID)
	KernelID  string
	SessionID string
	AgentID   string
	Image     string
	State     State
	ExitCode  int       // meaningful when State is StateExited
	StartedAt time.Time // zero if it never started
	// FinishedAt is when it last exited; zero if it has not.
	FinishedAt time.Time
	Labels     map[string]string // every label, the managed ones included
}

// Managed reports whether labels mark a container Cairn created.
func Managed(labels map[string]string) bool { return labels[LabelManaged] == ManagedValue }

// SetLabels sets c's labels and the kernel, session and agent ids they
// carry.
func (c *Container) SetLabels(labels map[string]string) {
	c.Labels = labels
	c.KernelID = labels[LabelKernel]
	c.SessionID = labels[LabelSession]
	c.AgentID = labels[LabelAgent]
}
