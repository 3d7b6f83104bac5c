package domain

import (
	"slices"
	"testing"

	"github.com/google/uuid"
)

// TestSessionDisconnect: a session whose agent goes silent is
// DISCONNECTED, keeps its kernels and allocations, and nothing about it
// ends.
func TestSessionDisconnect(t *testing.T) {
	pA := place(kernelA, "a1", "GPU-0")
	sched := []Event{batch(), scheduled(pA)}
	run := append(slices.Clone(sched), running(kernelA, 2), SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(2)})
	gone := SessionDisconnected{AgentID: "a1", Reason: ReasonAgentDisconnected, At: at(5)}
	disconnect := func(agent string) func(*Session) ([]Event, error) {
		return func(s *Session) ([]Event, error) { return s.Disconnect(agent, ReasonAgentDisconnected, at(5)) }
	}

	runSessionCases(t, []sessionCase{
		{
			name:  "a running session is disconnected with its agent",
			given: run,
			when:  disconnect("a1"),
			then:  []Event{gone},
			check: func(t *testing.T, s *Session) {
				k, _ := s.Kernel(kernelA)
				if s.Status() != StatusDisconnected || s.StatusReason() != ReasonAgentDisconnected ||
					!slices.Equal(s.DisconnectedFrom(), []string{"a1"}) || k.Status() != StatusRunning || len(s.KernelsToRelease()) != 0 {
					t.Fatalf("%s %s %v kernel %s release %v", s.Status(), s.StatusReason(), s.DisconnectedFrom(), k.Status(), s.KernelsToRelease())
				}
				if !s.Status().HoldsResources() || s.Status().IsStarting() {
					t.Fatal("a disconnected session holds its resources and has no start deadline")
				}
			},
		},
		{
			name:  "a starting session is disconnected too",
			given: sched,
			when:  disconnect("a1"),
			then:  []Event{gone},
		},
		{
			name:  "another agent's silence is not the session's",
			given: run,
			when:  disconnect("a2"),
		},
		{
			name:  "disconnecting twice changes nothing",
			given: append(slices.Clone(run), gone),
			when:  disconnect("a1"),
		},
		{
			name:  "a session being torn down stays TERMINATING",
			given: append(slices.Clone(run), SessionTerminating{Reason: ReasonUserRequested, At: at(3)}),
			when:  disconnect("a1"),
		},
		{
			name:  "an ended session is left alone",
			given: append(slices.Clone(run), SessionErrored{Reason: ReasonAgentLost, At: at(3)}),
			when:  disconnect("a1"),
		},
		{
			name: "an unknown session is not found",
			when: disconnect("a1"),
			err:  ErrNotFound,
		},
		{
			name:  "the agent is required",
			given: run,
			when:  disconnect(""),
			err:   ErrInvalid,
		},
		{
			name:  "a disconnected session can still be terminated",
			given: append(slices.Clone(run), gone),
			when:  func(s *Session) ([]Event, error) { return s.Terminate(ReasonUserRequested, at(6)) },
			then:  []Event{SessionTerminating{Reason: ReasonUserRequested, At: at(6)}},
			check: func(t *testing.T, s *Session) {
				if s.Status() != StatusTerminating || len(s.DisconnectedFrom()) != 0 {
					t.Fatalf("%s %v", s.Status(), s.DisconnectedFrom())
				}
			},
		},
		{
			name:  "a disconnected session given up on goes to ERROR",
			given: append(slices.Clone(run), gone),
			when:  func(s *Session) ([]Event, error) { return s.Fail(ReasonAgentLost, "agent a1 lost", at(9)) },
			then:  []Event{SessionErrored{Reason: ReasonAgentLost, Message: "agent a1 lost", At: at(9)}},
			check: func(t *testing.T, s *Session) {
				if s.Status() != StatusError || len(s.KernelsToRelease()) != 1 {
					t.Fatalf("%s %v", s.Status(), s.KernelsToRelease())
				}
			},
		},
	})
}

// TestSessionReconnect: the agent's return puts the session back in the
// phase its kernels are in, with the reason agent-reconnected; a kernel
// that ended meanwhile ends the session as usual.
func TestSessionReconnect(t *testing.T) {
	pA := place(kernelA, "a1", "GPU-0")
	runningA := running(kernelA, 2)
	run := []Event{batch(), scheduled(pA), runningA, SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(2)}}
	gone := SessionDisconnected{AgentID: "a1", Reason: ReasonAgentDisconnected, At: at(5)}
	away := append(slices.Clone(run), gone)
	creatingAway := []Event{batch(), scheduled(pA), KernelCreating{KernelID: kernelA, At: at(2)},
		SessionStatusChanged{Status: StatusCreating, Reason: ReasonKernelCreating, At: at(2)}, gone}
	back := SessionReconnected{AgentID: "a1", Status: StatusRunning, Reason: ReasonAgentReconnected, At: at(70)}
	reconnect := func(running ...uuid.UUID) func(*Session) ([]Event, error) {
		return func(s *Session) ([]Event, error) { return s.Reconnect("a1", running, at(70)) }
	}
	reportRunning := func(container string) KernelReport {
		r := report(PhaseRunning, 70)
		r.ContainerID = container
		return r
	}

	runSessionCases(t, []sessionCase{
		{
			name:  "the agent reports the kernel running: RUNNING again, same container",
			given: away,
			when:  reconnect(kernelA),
			then:  []Event{back},
			check: func(t *testing.T, s *Session) {
				k, _ := s.Kernel(kernelA)
				if s.Status() != StatusRunning || s.StatusReason() != ReasonAgentReconnected || len(s.DisconnectedFrom()) != 0 ||
					k.ContainerID() != runningA.ContainerID || !s.StartedAt().Equal(at(2)) {
					t.Fatalf("%s %s %v %s %v", s.Status(), s.StatusReason(), s.DisconnectedFrom(), k.ContainerID(), s.StartedAt())
				}
			},
		},
		{
			name:  "a heartbeat without the kernel does not reconnect the session",
			given: away,
			when:  reconnect(otherID),
		},
		{
			name:  "a session not disconnected is left alone",
			given: run,
			when:  reconnect(kernelA),
		},
		{
			name:  "a running report from the returning agent reconnects the session",
			given: away,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(reportRunning(runningA.ContainerID)) },
			then:  []Event{back},
		},
		{
			name:  "a report naming another container reconnects nothing",
			given: away,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(reportRunning("other")) },
			err:   ErrConflict,
		},
		{
			name:  "a kernel that exited meanwhile is a normal exit",
			given: away,
			when: func(s *Session) ([]Event, error) {
				r := report(PhaseExited, 70)
				r.ExitCode = 3
				return s.ReportKernel(r)
			},
			then: []Event{
				back,
				KernelExited{KernelID: kernelA, ExitCode: 3, Reason: ReasonTaskFailed, At: at(70)},
				SessionTerminated{Reason: ReasonTaskFailed, Result: ResultFailure, ExitCode: intp(3), At: at(70)},
			},
		},
		{
			name:  "a session disconnected while starting returns to its phase, then runs",
			given: creatingAway,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(reportRunning(runningA.ContainerID)) },
			then: []Event{
				SessionReconnected{AgentID: "a1", Status: StatusCreating, Reason: ReasonAgentReconnected, At: at(70)},
				KernelRunning{KernelID: kernelA, ContainerID: runningA.ContainerID, At: at(70)},
				SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(70)},
			},
		},
	})
}

// TestSessionDisconnectMultiNode: a session spread over two agents is
// DISCONNECTED while either is; it returns once both are back, and an end
// reported by the connected agent tears it down as usual.
func TestSessionDisconnectMultiNode(t *testing.T) {
	pA, pB := place(kernelA, "a1", "GPU-0"), place(kernelB, "a2", "GPU-0")
	both := []Event{requestedEvent(SessionBatch, ClusterMultiNode, kernelA, kernelB), scheduled(pA, pB),
		running(kernelA, 2), running(kernelB, 3), SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(3)}}
	goneA := SessionDisconnected{AgentID: "a1", Reason: ReasonAgentDisconnected, At: at(5)}
	goneB := SessionDisconnected{AgentID: "a2", Reason: ReasonAgentDisconnected, At: at(6)}
	forB := func(phase KernelPhase, n int) KernelReport {
		r := report(phase, n)
		r.KernelID, r.AgentID = kernelB, "a2"
		return r
	}

	runSessionCases(t, []sessionCase{
		{
			name:  "the second agent's silence is recorded too",
			given: append(slices.Clone(both), goneA),
			when:  func(s *Session) ([]Event, error) { return s.Disconnect("a2", ReasonAgentDisconnected, at(6)) },
			then:  []Event{goneB},
			check: func(t *testing.T, s *Session) {
				if !slices.Equal(s.DisconnectedFrom(), []string{"a1", "a2"}) || s.Status() != StatusDisconnected {
					t.Fatalf("%s %v", s.Status(), s.DisconnectedFrom())
				}
			},
		},
		{
			name:  "one agent back, the other still away: still DISCONNECTED",
			given: append(slices.Clone(both), goneA, goneB),
			when:  func(s *Session) ([]Event, error) { return s.Reconnect("a1", []uuid.UUID{kernelA}, at(7)) },
			then:  []Event{SessionReconnected{AgentID: "a1", Reason: ReasonAgentReconnected, At: at(7)}},
			check: func(t *testing.T, s *Session) {
				if !slices.Equal(s.DisconnectedFrom(), []string{"a2"}) || s.Status() != StatusDisconnected {
					t.Fatalf("%s %v", s.Status(), s.DisconnectedFrom())
				}
			},
		},
		{
			name:  "the last agent back: RUNNING",
			given: append(slices.Clone(both), goneA, goneB, SessionReconnected{AgentID: "a1", Reason: ReasonAgentReconnected, At: at(7)}),
			when:  func(s *Session) ([]Event, error) { return s.Reconnect("a2", []uuid.UUID{kernelB}, at(8)) },
			then:  []Event{SessionReconnected{AgentID: "a2", Status: StatusRunning, Reason: ReasonAgentReconnected, At: at(8)}},
		},
		{
			name:  "the connected agent's kernel exits: the session is torn down",
			given: append(slices.Clone(both), goneA),
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(forB(PhaseExited, 8)) },
			then: []Event{
				KernelExited{KernelID: kernelB, ExitCode: 0, Reason: ReasonTaskFinished, At: at(8)},
				SessionTerminating{Reason: ReasonTaskFinished, At: at(8)},
			},
			check: func(t *testing.T, s *Session) {
				if s.Status() != StatusTerminating || len(s.DisconnectedFrom()) != 0 {
					t.Fatalf("%s %v", s.Status(), s.DisconnectedFrom())
				}
			},
		},
	})
}
