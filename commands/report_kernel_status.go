package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// ReportKernelStatus is an agent's report about one of its kernels:
// preparing, pulling, prepared, creating, running (with the container id),
// exited (with the exit code), removed (the container is gone), or failed
// (with a reason such as failed-to-start, and a message).
type ReportKernelStatus struct {
	SessionID   uuid.UUID
	KernelID    uuid.UUID
	AgentID     string
	Phase       domain.KernelPhase
	ContainerID string
	ExitCode    int
	Reason      string
	Message     string
	// ServicePorts are the ports the agent published for the kernel's
	// apps (when running).
	ServicePorts []domain.PublishedPort
	// Pull is the image pull's progress (pulling); ReadyApps are the apps
	// that answered the agent's probe (running).
	Pull      *domain.PullProgress
	ReadyApps []string
	// WhileStarting makes the report a start deadline's verdict: it
	// applies only while the session is still starting (SCHEDULED to
	// CREATING) and is refused with a conflict otherwise, since the
	// caller decided on a view the session has left (it runs, or is
	// being terminated).
	WhileStarting bool
}

func (ReportKernelStatus) CommandName() string { return "kernel.report-status" }

type reportKernelStatusHandler struct {
	sessions repository[*domain.Session]
	releaser
	clock
}

// newReportKernelStatusHandler builds the handler over what it uses.
func newReportKernelStatusHandler(sessions repository[*domain.Session], releaser releaser, now clock) reportKernelStatusHandler {
	return reportKernelStatusHandler{sessions: sessions, releaser: releaser, clock: now}
}

// Handle folds the report into the session (domain.Session.ReportKernel),
// which may move the session's derived status in the same append, then
// releases on their agents the allocations of every kernel that has ended
// (all of the session's once it has ended, e.g. in ERROR).
//
// Reports arrive at least once: a repeated or stale report appends nothing
// on the session and re-runs the (idempotent) release. That is also what
// repairs a crash between the session's append and the release: the agent
// reports again, or the agent's reconciler reports the container gone.
func (h reportKernelStatusHandler) Handle(ctx context.Context, md Metadata, cmd ReportKernelStatus) (Result, error) {
	at := h.now()
	report := domain.KernelReport{
		KernelID: cmd.KernelID, AgentID: cmd.AgentID, Phase: cmd.Phase, ContainerID: cmd.ContainerID,
		ExitCode: cmd.ExitCode, Reason: cmd.Reason, Message: cmd.Message, ServicePorts: cmd.ServicePorts,
		Pull: cmd.Pull, ReadyApps: cmd.ReadyApps, At: at,
	}
	s, pos, err := h.sessions.update(ctx, domain.SessionStream(cmd.SessionID), md, func(s *domain.Session) ([]domain.Event, error) {
		if cmd.WhileStarting && !s.Status().IsStarting() {
			return nil, domain.Errorf("kernel.report-status", domain.KindConflict, "session %s is %s, no longer starting", cmd.SessionID, s.Status())
		}
		return s.ReportKernel(report)
	})
	if err != nil {
		return Result{}, err
	}
	relPos, err := h.releaseEnded(ctx, md, s, at)
	return Result{Position: max(pos, relPos)}, err
}
