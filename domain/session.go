package domain

import (
	"time"

	"github.com/google/uuid"
)

// SessionType is what a session is for.
type SessionType string

const (
	// SessionInteractive runs until its user (or an idle/lifetime limit)
	// ends it.
	SessionInteractive SessionType = "interactive"
	// SessionBatch runs its command to completion and has a result.
	SessionBatch SessionType = "batch"
	// SessionInference serves model replicas. Resource groups may allow
	// it; sessions cannot request it yet.
	SessionInference SessionType = "inference"
)

// ClusterMode says whether a multi-kernel session's kernels share an agent.
type ClusterMode string

const (
	// ClusterSingleNode puts every kernel on one agent (the default).
	ClusterSingleNode ClusterMode = "single-node"
	// ClusterMultiNode lets the scheduler spread kernels over agents.
	ClusterMultiNode ClusterMode = "multi-node"
)

// SessionResult is the outcome of a batch session.
type SessionResult string

const (
	// ResultUndefined: not a batch session, or not finished.
	ResultUndefined SessionResult = ""
	ResultSuccess   SessionResult = "success"
	ResultFailure   SessionResult = "failure"
)

// Owner is who a session belongs to: the user and the access key the
// request was signed with (whose keypair policy limits it).
type Owner struct {
	UserID    string `json:"user_id"`
	AccessKey string `json:"access_key"`
}

// Session is the session aggregate: what a user requested, where it was
// placed, and its kernels' and its own lifecycle. Its fields change only by
// folding events (RehydrateSession); decision methods return new events.
// The zero Session is a session that does not exist yet (revision -1).
type Session struct {
	id            uuid.UUID
	name          string
	owner         Owner
	domainName    string
	project       string
	resourceGroup string
	typ           SessionType
	image         string
	command       string
	env           map[string]string
	priority      int
	clusterMode   ClusterMode
	kernels       []Kernel
	startsAt      time.Time
	dependencies  []uuid.UUID
	architecture  string

	status         SessionStatus
	statusReason   string
	pendingDetails []string
	pendingTries   int
	result         SessionResult
	exitCode       *int

	// disconnectedFrom are the silent agents (sorted) that made the
	// session DISCONNECTED; resumeStatus and resumeReason are the status
	// it had before.
	disconnectedFrom []string
	resumeStatus     SessionStatus
	resumeReason     string

	requestedAt  time.Time
	scheduledAt  time.Time
	startedAt    time.Time
	terminatedAt time.Time

	exists   bool
	revision int64
}

// Exists reports whether the session has been requested.
func (s *Session) Exists() bool { return s.exists }

// Revision is the revision of the last event folded into the session, -1
// for a session that does not exist: the expected revision of the next
// append.
func (s *Session) Revision() int64 { return s.revision }

func (s *Session) ID() uuid.UUID            { return s.id }
func (s *Session) Name() string             { return s.name }
func (s *Session) Owner() Owner             { return s.owner }
func (s *Session) Domain() string           { return s.domainName }
func (s *Session) Project() string          { return s.project }
func (s *Session) ResourceGroup() string    { return s.resourceGroup }
func (s *Session) Type() SessionType        { return s.typ }
func (s *Session) Image() string            { return s.image }
func (s *Session) Command() string          { return s.command }
func (s *Session) Priority() int            { return s.priority }
func (s *Session) ClusterMode() ClusterMode { return s.clusterMode }
func (s *Session) Status() SessionStatus    { return s.status }
func (s *Session) StatusReason() string     { return s.statusReason }
func (s *Session) PendingTries() int        { return s.pendingTries }
func (s *Session) Result() SessionResult    { return s.result }
func (s *Session) RequestedAt() time.Time   { return s.requestedAt }
func (s *Session) ScheduledAt() time.Time   { return s.scheduledAt }
func (s *Session) StartedAt() time.Time     { return s.startedAt }
func (s *Session) TerminatedAt() time.Time  { return s.terminatedAt }
func (s *Session) PendingDetails() []string { return append([]string(nil), s.pendingDetails...) }
func (s *Session) StartsAt() time.Time      { return s.startsAt }
func (s *Session) Architecture() string     { return s.architecture }

// Dependencies returns the sessions this one waits for.
func (s *Session) Dependencies() []uuid.UUID { return append([]uuid.UUID(nil), s.dependencies...) }

// Env returns a copy of the session's environment.
func (s *Session) Env() map[string]string {
	out := make(map[string]string, len(s.env))
	for k, v := range s.env {
		out[k] = v
	}
	return out
}

// ExitCode returns the main kernel's exit code once the session ended, if
// it reported one.
func (s *Session) ExitCode() (int, bool) {
	if s.exitCode == nil {
		return 0, false
	}
	return *s.exitCode, true
}

// Kernels returns copies of the session's kernels, main first.
func (s *Session) Kernels() []Kernel {
	out := make([]Kernel, len(s.kernels))
	for i, k := range s.kernels {
		out[i] = k.clone()
	}
	return out
}

// Kernel returns a copy of the kernel with the given id.
func (s *Session) Kernel(id uuid.UUID) (Kernel, bool) {
	if i := s.kernelIndex(id); i >= 0 {
		return s.kernels[i].clone(), true
	}
	return Kernel{}, false
}

// KernelsToRelease returns the kernels whose agent allocation must be
// released now: every placed kernel of a session that has ended, and every
// placed kernel that has ended in a session that still runs. Releasing is
// idempotent, so callers may release these after every change.
func (s *Session) KernelsToRelease() []Kernel {
	var out []Kernel
	for _, k := range s.kernels {
		if k.agentID != "" && (s.status.IsTerminal() || k.status.IsTerminal()) {
			out = append(out, k.clone())
		}
	}
	return out
}

func (s *Session) kernelIndex(id uuid.UUID) int {
	for i := range s.kernels {
		if s.kernels[i].id == id {
			return i
		}
	}
	return -1
}

func (s *Session) cloneKernels() []Kernel {
	out := make([]Kernel, len(s.kernels))
	for i, k := range s.kernels {
		out[i] = k.clone()
	}
	return out
}

func (s *Session) notFound(op string) error {
	return Errorf(op, KindNotFound, "session does not exist")
}
