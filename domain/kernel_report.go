package domain

import (
	"slices"
	"time"

	"github.com/google/uuid"
)

// KernelPhase is what an agent reports about one of its kernels.
type KernelPhase string

const (
	PhasePreparing KernelPhase = "preparing"
	PhasePulling   KernelPhase = "pulling"
	PhasePrepared  KernelPhase = "prepared"
	PhaseCreating  KernelPhase = "creating"
	// PhaseRunning needs the container id.
	PhaseRunning KernelPhase = "running"
	// PhaseExited: the kernel's process ended, with ExitCode.
	PhaseExited KernelPhase = "exited"
	// PhaseRemoved: the kernel's container is gone (or was never created).
	PhaseRemoved KernelPhase = "removed"
	// PhaseFailed: the kernel failed, with a Reason (e.g. failed-to-start)
	// and a Message.
	PhaseFailed KernelPhase = "failed"
)

// phaseStatus maps the progress phases to the kernel status they reach.
var phaseStatus = map[KernelPhase]SessionStatus{
	PhasePreparing: StatusPreparing,
	PhasePulling:   StatusPulling,
	PhasePrepared:  StatusPrepared,
	PhaseCreating:  StatusCreating,
	PhaseRunning:   StatusRunning,
}

// KernelReport is an agent's report about one kernel.
type KernelReport struct {
	KernelID uuid.UUID
	// AgentID is the reporting agent; it must be the kernel's.
	AgentID     string
	Phase       KernelPhase
	ContainerID string
	ExitCode    int
	Reason      string
	Message     string
	// ServicePorts are the ports the agent published, when running.
	ServicePorts []PublishedPort
	// Pull is the image pull's progress, in a pulling report.
	Pull *PullProgress
	// ReadyApps are the apps (service port names) that answered the
	// agent's probe, in a running report.
	ReadyApps []string
	At        time.Time
}

// ReportKernel folds an agent's report into the kernel's status and
// returns the kernel event plus, when the session status derived from all
// kernels changes, the session event (status-changed, terminating,
// terminated or errored) in the same decision.
//
// Agents deliver at least once and may repeat or reorder reports, so a
// report that is no news (the kernel is already at or past that phase, the
// kernel or the session has ended) returns no events. A report from
// another agent than the kernel's, about a session not scheduled yet, or
// naming a second container for a running kernel is KindConflict; an
// unknown kernel is KindNotFound.
func (s *Session) ReportKernel(r KernelReport) ([]Event, error) {
	const op = "session.report-kernel"
	if !s.exists {
		return nil, s.notFound(op)
	}
	if err := r.validate(op); err != nil {
		return nil, err
	}
	i := s.kernelIndex(r.KernelID)
	if i < 0 {
		return nil, Errorf(op, KindNotFound, "kernel %s is not in session %s", r.KernelID, s.id)
	}
	k := s.kernels[i]
	switch {
	case s.status.IsTerminal(), k.status.IsTerminal():
		return nil, nil
	case s.status == StatusPending:
		return nil, Errorf(op, KindConflict, "session is PENDING: kernel %s is not scheduled", k.id)
	case r.AgentID != k.agentID:
		return nil, Errorf(op, KindConflict, "kernel %s runs on agent %s, not %s", k.id, k.agentID, r.AgentID)
	case slices.Contains(s.disconnectedFrom, r.AgentID):
		// The agent is back: the session reconnects first, and the
		// report then means what it means to a connected session (an
		// exit ends it as usual).
		rec := s.reconnected(r.AgentID, r.At)
		after, err := s.withEvent(op, rec)
		if err != nil {
			return nil, err
		}
		events, err := after.ReportKernel(r)
		if err != nil {
			return nil, err
		}
		return append([]Event{rec}, events...), nil
	}
	kev, err := s.kernelEvent(op, k, r)
	if err != nil {
		return nil, err
	}
	if kev == nil {
		if d := k.detailEvent(r); d != nil {
			return []Event{d}, nil
		}
		return nil, nil
	}
	// Disconnected from another agent: decide as the session was; only an
	// end or a teardown moves it out of DISCONNECTED (its phase is derived
	// again when the agent returns).
	events, err := s.resumed().withSessionEvent(op, kev, r)
	if s.status == StatusDisconnected && len(events) == 2 && progressRank(sessionEventStatus(events[1])) > 0 {
		events = events[:1]
	}
	if run, ok := kev.(KernelRunning); ok && err == nil {
		// A running report that already names ready apps (a first report
		// lost and sent again later): the kernel runs, then they are ready.
		started := k
		started.status, started.containerID, started.servicePorts = StatusRunning, run.ContainerID, run.ServicePorts
		if d := started.detailEvent(r); d != nil {
			events = append(events, d)
		}
	}
	return events, err
}

// sessionEventStatus is the status a session event of withSessionEvent
// moves to.
func sessionEventStatus(ev Event) SessionStatus {
	if e, ok := ev.(SessionStatusChanged); ok {
		return e.Status
	}
	return ""
}

func (r KernelReport) validate(op string) error {
	switch {
	case r.KernelID == uuid.Nil:
		return Invalid(op, "kernel_id", "required")
	case r.AgentID == "":
		return Invalid(op, "agent_id", "required")
	case r.At.IsZero():
		return Invalid(op, "at", "must be set")
	case r.Phase == PhaseRunning && r.ContainerID == "":
		return Invalid(op, "container_id", "required when running")
	case r.Phase == PhaseFailed && r.Reason == "":
		return Invalid(op, "reason", "required when failed")
	}
	if err := CheckPublishedPorts(op, "service_ports", r.ServicePorts); err != nil {
		return err
	}
	if err := CheckPullProgress(op, "pull", r.Pull); err != nil {
		return err
	}
	switch r.Phase {
	case PhaseExited, PhaseRemoved, PhaseFailed:
		return nil
	}
	if _, ok := phaseStatus[r.Phase]; !ok {
		return Invalid(op, "phase", "unknown kernel phase %q", r.Phase)
	}
	return nil
}

// kernelEvent returns the event a report means for kernel k, or nil when
// the report is no news.
func (s *Session) kernelEvent(op string, k Kernel, r KernelReport) (Event, error) {
	switch r.Phase {
	case PhaseExited:
		reason := ReasonTaskFinished
		if r.ExitCode != 0 {
			reason = ReasonTaskFailed
		}
		if s.status == StatusTerminating {
			reason = s.statusReason
		}
		return KernelExited{KernelID: k.id, ExitCode: r.ExitCode, Reason: reason, At: r.At}, nil
	case PhaseRemoved:
		// Gone without an exit report: torn down as asked, or removed
		// behind Cairn's back.
		reason := ReasonForceTerminated
		if s.status == StatusTerminating {
			reason = s.statusReason
		}
		return KernelTerminated{KernelID: k.id, Reason: reason, At: r.At}, nil
	case PhaseFailed:
		return KernelErrored{KernelID: k.id, Reason: r.Reason, Message: r.Message, At: r.At}, nil
	}
	target := phaseStatus[r.Phase]
	if progressRank(k.status) >= progressRank(target) {
		if target == StatusRunning && k.status == StatusRunning && k.containerID != r.ContainerID {
			return nil, Errorf(op, KindConflict, "kernel %s already runs in container %s, not %s", k.id, k.containerID, r.ContainerID)
		}
		return nil, nil
	}
	switch target {
	case StatusPreparing:
		return KernelPreparing{KernelID: k.id, At: r.At}, nil
	case StatusPulling:
		return KernelPulling{KernelID: k.id, At: r.At}, nil
	case StatusPrepared:
		return KernelPrepared{KernelID: k.id, At: r.At}, nil
	case StatusCreating:
		return KernelCreating{KernelID: k.id, At: r.At}, nil
	}
	return KernelRunning{KernelID: k.id, ContainerID: r.ContainerID, ServicePorts: slices.Clone(r.ServicePorts), At: r.At}, nil
}

// withSessionEvent folds the kernel event into a copy of the kernels and
// appends the session event for the derived status, if it changed.
func (s *Session) withSessionEvent(op string, kev Event, r KernelReport) ([]Event, error) {
	after := *s
	after.kernels = s.cloneKernels()
	if err := after.applyKernelEvent(kev); err != nil {
		return nil, &Error{Op: op, Kind: KindInternal, Err: err}
	}
	next := deriveSessionStatus(s.status, after.kernels)
	if next == s.status {
		return []Event{kev}, nil
	}
	if !s.status.CanTransition(next) {
		return nil, Errorf(op, KindInternal, "derived status %s cannot follow %s", next, s.status)
	}
	var sev Event
	switch next {
	case StatusError:
		sev = SessionErrored{Reason: r.Reason, Message: r.Message, At: r.At}
	case StatusTerminated:
		reason := s.endReason(after.kernels)
		sev = SessionTerminated{Reason: reason, Result: s.resultFor(reason), ExitCode: mainExitCode(after.kernels), At: r.At}
	case StatusTerminating:
		sev = SessionTerminating{Reason: kernelReason(kev), At: r.At}
	default:
		sev = SessionStatusChanged{Status: next, Reason: progressReason(next), At: r.At}
	}
	return []Event{kev, sev}, nil
}

// endReason is the reason of a session whose kernels have all ended: the
// reason it was being torn down for (user-requested, idle-timeout, ...);
// otherwise task-failed if a kernel exited non-zero, the reason of a kernel
// that vanished without an exit code, or task-finished.
func (s *Session) endReason(kernels []Kernel) string {
	if s.status == StatusTerminating && s.statusReason != ReasonTaskFinished && s.statusReason != ReasonTaskFailed {
		return s.statusReason
	}
	for _, k := range kernels {
		if k.exitCode != nil && *k.exitCode != 0 {
			return ReasonTaskFailed
		}
	}
	for _, k := range kernels {
		if k.status == StatusTerminated && k.exitCode == nil {
			return k.statusReason
		}
	}
	return ReasonTaskFinished
}

// resultFor: a batch session succeeded only if its task finished.
func (s *Session) resultFor(reason string) SessionResult {
	switch {
	case s.typ != SessionBatch:
		return ResultUndefined
	case reason == ReasonTaskFinished:
		return ResultSuccess
	}
	return ResultFailure
}

func mainExitCode(kernels []Kernel) *int {
	for _, k := range kernels {
		if k.role == KernelMain && k.exitCode != nil {
			code := *k.exitCode
			return &code
		}
	}
	return nil
}

func kernelReason(ev Event) string {
	switch e := ev.(type) {
	case KernelExited:
		return e.Reason
	case KernelTerminated:
		return e.Reason
	case KernelErrored:
		return e.Reason
	}
	return ""
}
