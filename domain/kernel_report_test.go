package domain

import (
	"testing"
)

func report(phase KernelPhase, n int) KernelReport {
	return KernelReport{KernelID: kernelA, AgentID: "a1", Phase: phase, At: at(n)}
}

func TestKernelReportsSingleKernel(t *testing.T) {
	pA := place(kernelA, "a1", "GPU-0")
	sched := []Event{batch(), scheduled(pA)}
	runningEv := running(kernelA, 4)
	run := append(append([]Event(nil), sched...), runningEv, SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(4)})
	terminating := append(append([]Event(nil), run...), SessionTerminating{Reason: ReasonUserRequested, At: at(5)})
	interactive := []Event{requestedEvent(SessionInteractive, ClusterSingleNode, kernelA), scheduled(pA), runningEv, SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(4)}}
	exited := func(code, n int) KernelReport { r := report(PhaseExited, n); r.ExitCode = code; return r }
	runningReport := func(container string) KernelReport {
		r := report(PhaseRunning, 4)
		r.ContainerID = container
		return r
	}

	runSessionCases(t, []sessionCase{
		{
			name:  "preparing moves the session to PREPARING",
			given: sched,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(report(PhasePreparing, 2)) },
			then: []Event{
				KernelPreparing{KernelID: kernelA, At: at(2)},
				SessionStatusChanged{Status: StatusPreparing, Reason: ReasonKernelPreparing, At: at(2)},
			},
		},
		{
			name:  "creating after pulling",
			given: append(append([]Event(nil), sched...), KernelPulling{KernelID: kernelA, At: at(2)}, SessionStatusChanged{Status: StatusPulling, Reason: ReasonKernelPulling, At: at(2)}),
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(report(PhaseCreating, 3)) },
			then: []Event{
				KernelCreating{KernelID: kernelA, At: at(3)},
				SessionStatusChanged{Status: StatusCreating, Reason: ReasonKernelCreating, At: at(3)},
			},
		},
		{
			name:  "running records the container and starts the session",
			given: sched,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(runningReport(runningEv.ContainerID)) },
			then:  []Event{runningEv, SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(4)}},
			check: func(t *testing.T, s *Session) {
				k, _ := s.Kernel(kernelA)
				if s.Status() != StatusRunning || !s.StartedAt().Equal(at(4)) || k.ContainerID() != runningEv.ContainerID {
					t.Fatalf("%s %v %q", s.Status(), s.StartedAt(), k.ContainerID())
				}
			},
		},
		{
			name:  "running records the ports the agent published",
			given: sched,
			when: func(s *Session) ([]Event, error) {
				r := runningReport(runningEv.ContainerID)
				r.ServicePorts = []PublishedPort{{Name: "jupyter", Protocol: "http", ContainerPort: 8888, HostPort: 30000}}
				return s.ReportKernel(r)
			},
			then: []Event{
				KernelRunning{KernelID: kernelA, ContainerID: runningEv.ContainerID, At: at(4),
					ServicePorts: []PublishedPort{{Name: "jupyter", Protocol: "http", ContainerPort: 8888, HostPort: 30000}}},
				SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(4)},
			},
			check: func(t *testing.T, s *Session) {
				k, _ := s.Kernel(kernelA)
				if p := k.ServicePorts(); len(p) != 1 || p[0].HostPort != 30000 {
					t.Fatalf("kernel's ports %+v", p)
				}
			},
		},
		{
			name:  "ports that are not ports are refused",
			given: sched,
			when: func(s *Session) ([]Event, error) {
				r := runningReport(runningEv.ContainerID)
				r.ServicePorts = []PublishedPort{{Name: "jupyter", Protocol: "http", ContainerPort: 8888, HostPort: 0}}
				return s.ReportKernel(r)
			},
			err: ErrInvalid,
		},
		{
			name:  "running reported twice is no news",
			given: run,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(runningReport(runningEv.ContainerID)) },
		},
		{
			name:  "a second container for a running kernel is a conflict",
			given: run,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(runningReport("other")) },
			err:   ErrConflict,
		},
		{
			name:  "a stale phase after running is no news",
			given: run,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(report(PhasePreparing, 5)) },
		},
		{
			name:  "a report from another agent is a conflict",
			given: run,
			when: func(s *Session) ([]Event, error) {
				r := exited(0, 5)
				r.AgentID = "a2"
				return s.ReportKernel(r)
			},
			err: ErrConflict,
		},
		{
			name:  "a report about a pending session is a conflict",
			given: []Event{batch()},
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(report(PhasePreparing, 2)) },
			err:   ErrConflict,
		},
		{
			name:  "a report about an unknown kernel is not found",
			given: run,
			when: func(s *Session) ([]Event, error) {
				r := report(PhasePreparing, 2)
				r.KernelID = otherID
				return s.ReportKernel(r)
			},
			err: ErrNotFound,
		},
		{
			name:  "exit 0 of a batch session: TERMINATED, task-finished, success",
			given: run,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(exited(0, 9)) },
			then: []Event{
				KernelExited{KernelID: kernelA, ExitCode: 0, Reason: ReasonTaskFinished, At: at(9)},
				SessionTerminated{Reason: ReasonTaskFinished, Result: ResultSuccess, ExitCode: intp(0), At: at(9)},
			},
			check: func(t *testing.T, s *Session) {
				if code, ok := s.ExitCode(); s.Status() != StatusTerminated || s.Result() != ResultSuccess || !ok || code != 0 || !s.TerminatedAt().Equal(at(9)) {
					t.Fatalf("%s %s %d %v", s.Status(), s.Result(), code, ok)
				}
				if got := s.KernelsToRelease(); len(got) != 1 || got[0].AgentID() != "a1" {
					t.Fatalf("release %+v", got)
				}
			},
		},
		{
			name:  "exit 3 of a batch session: TERMINATED, task-failed, failure, exit code kept",
			given: run,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(exited(3, 9)) },
			then: []Event{
				KernelExited{KernelID: kernelA, ExitCode: 3, Reason: ReasonTaskFailed, At: at(9)},
				SessionTerminated{Reason: ReasonTaskFailed, Result: ResultFailure, ExitCode: intp(3), At: at(9)},
			},
		},
		{
			name:  "an interactive session has no result",
			given: interactive,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(exited(0, 9)) },
			then: []Event{
				KernelExited{KernelID: kernelA, ExitCode: 0, Reason: ReasonTaskFinished, At: at(9)},
				SessionTerminated{Reason: ReasonTaskFinished, ExitCode: intp(0), At: at(9)},
			},
		},
		{
			name:  "a kernel may exit before it was reported running",
			given: sched,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(exited(1, 3)) },
			then: []Event{
				KernelExited{KernelID: kernelA, ExitCode: 1, Reason: ReasonTaskFailed, At: at(3)},
				SessionTerminated{Reason: ReasonTaskFailed, Result: ResultFailure, ExitCode: intp(1), At: at(3)},
			},
		},
		{
			name:  "exit while terminating keeps the terminating reason",
			given: terminating,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(exited(137, 6)) },
			then: []Event{
				KernelExited{KernelID: kernelA, ExitCode: 137, Reason: ReasonUserRequested, At: at(6)},
				SessionTerminated{Reason: ReasonUserRequested, Result: ResultFailure, ExitCode: intp(137), At: at(6)},
			},
		},
		{
			name:  "the container removed while terminating ends the session",
			given: terminating,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(report(PhaseRemoved, 6)) },
			then: []Event{
				KernelTerminated{KernelID: kernelA, Reason: ReasonUserRequested, At: at(6)},
				SessionTerminated{Reason: ReasonUserRequested, Result: ResultFailure, At: at(6)},
			},
		},
		{
			name:  "a container removed behind Cairn's back is force-terminated",
			given: run,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(report(PhaseRemoved, 6)) },
			then: []Event{
				KernelTerminated{KernelID: kernelA, Reason: ReasonForceTerminated, At: at(6)},
				SessionTerminated{Reason: ReasonForceTerminated, Result: ResultFailure, At: at(6)},
			},
		},
		{
			name:  "removed after exited is no news",
			given: append(append([]Event(nil), run...), KernelExited{KernelID: kernelA, Reason: ReasonTaskFinished, At: at(9)}, SessionTerminated{Reason: ReasonTaskFinished, Result: ResultSuccess, ExitCode: intp(0), At: at(9)}),
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(report(PhaseRemoved, 10)) },
		},
		{
			name:  "a failed kernel errors the session",
			given: sched,
			when: func(s *Session) ([]Event, error) {
				r := report(PhaseFailed, 3)
				r.Reason, r.Message = ReasonFailedToStart, "image not found"
				return s.ReportKernel(r)
			},
			then: []Event{
				KernelErrored{KernelID: kernelA, Reason: ReasonFailedToStart, Message: "image not found", At: at(3)},
				SessionErrored{Reason: ReasonFailedToStart, Message: "image not found", At: at(3)},
			},
			check: func(t *testing.T, s *Session) {
				if s.Status() != StatusError || len(s.KernelsToRelease()) != 1 {
					t.Fatalf("%s %d", s.Status(), len(s.KernelsToRelease()))
				}
			},
		},
		{
			name:  "a running report needs the container id",
			given: sched,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(runningReport("")) },
			err:   ErrInvalid,
		},
		{
			name:  "a failure report needs a reason",
			given: sched,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(report(PhaseFailed, 3)) },
			err:   ErrInvalid,
		},
		{
			name:  "an unknown phase is invalid",
			given: sched,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(report("dancing", 3)) },
			err:   ErrInvalid,
		},
	})
}

// TestKernelReportsMultiKernel: the session status is derived from all
// kernels.
func TestKernelReportsMultiKernel(t *testing.T) {
	pA, pB := place(kernelA, "a1", "GPU-0"), place(kernelB, "a2", "GPU-0")
	sched := []Event{requestedEvent(SessionBatch, ClusterMultiNode, kernelA, kernelB), scheduled(pA, pB)}
	runA := append(append([]Event(nil), sched...), running(kernelA, 2))
	both := append(append([]Event(nil), runA...), running(kernelB, 3), SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(3)})
	mainDone := append(append([]Event(nil), both...),
		KernelExited{KernelID: kernelA, ExitCode: 0, Reason: ReasonTaskFinished, At: at(8)},
		SessionTerminating{Reason: ReasonTaskFinished, At: at(8)})
	forB := func(phase KernelPhase, n int) KernelReport {
		r := report(phase, n)
		r.KernelID, r.AgentID = kernelB, "a2"
		return r
	}

	runSessionCases(t, []sessionCase{
		{
			name:  "one kernel running is not a running session",
			given: sched,
			when: func(s *Session) ([]Event, error) {
				r := report(PhaseRunning, 2)
				r.ContainerID = running(kernelA, 2).ContainerID
				return s.ReportKernel(r)
			},
			then: []Event{running(kernelA, 2)},
			check: func(t *testing.T, s *Session) {
				if s.Status() != StatusScheduled {
					t.Fatalf("status %s", s.Status())
				}
			},
		},
		{
			name:  "the session is as far as its least advanced kernel",
			given: runA,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(forB(PhaseCreating, 3)) },
			then: []Event{
				KernelCreating{KernelID: kernelB, At: at(3)},
				SessionStatusChanged{Status: StatusCreating, Reason: ReasonKernelCreating, At: at(3)},
			},
		},
		{
			name:  "RUNNING when every kernel runs",
			given: runA,
			when: func(s *Session) ([]Event, error) {
				r := forB(PhaseRunning, 3)
				r.ContainerID = running(kernelB, 3).ContainerID
				return s.ReportKernel(r)
			},
			then: []Event{running(kernelB, 3), SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(3)}},
		},
		{
			name:  "any kernel in ERROR errors the session",
			given: both,
			when: func(s *Session) ([]Event, error) {
				r := forB(PhaseFailed, 5)
				r.Reason = ReasonFailedToStart
				return s.ReportKernel(r)
			},
			then: []Event{
				KernelErrored{KernelID: kernelB, Reason: ReasonFailedToStart, At: at(5)},
				SessionErrored{Reason: ReasonFailedToStart, At: at(5)},
			},
			check: func(t *testing.T, s *Session) {
				a, _ := s.Kernel(kernelA)
				if s.Status() != StatusError || a.Status() != StatusError {
					t.Fatalf("session %s, kernel A %s", s.Status(), a.Status())
				}
				if got := s.KernelsToRelease(); len(got) != 2 {
					t.Fatalf("release %d kernels, want both", len(got))
				}
			},
		},
		{
			name:  "the main kernel ending while a sub runs tears the session down",
			given: both,
			when: func(s *Session) ([]Event, error) {
				return s.ReportKernel(KernelReport{KernelID: kernelA, AgentID: "a1", Phase: PhaseExited, At: at(8)})
			},
			then: []Event{
				KernelExited{KernelID: kernelA, ExitCode: 0, Reason: ReasonTaskFinished, At: at(8)},
				SessionTerminating{Reason: ReasonTaskFinished, At: at(8)},
			},
			check: func(t *testing.T, s *Session) {
				got := s.KernelsToRelease()
				if s.Status() != StatusTerminating || len(got) != 1 || got[0].ID() != kernelA {
					t.Fatalf("status %s, release %d", s.Status(), len(got))
				}
			},
		},
		{
			name:  "TERMINATED only when every kernel has ended",
			given: mainDone,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(forB(PhaseRemoved, 9)) },
			then: []Event{
				KernelTerminated{KernelID: kernelB, Reason: ReasonTaskFinished, At: at(9)},
				SessionTerminated{Reason: ReasonTaskFinished, Result: ResultSuccess, ExitCode: intp(0), At: at(9)},
			},
		},
		{
			name:  "a sub kernel exiting non-zero fails the batch",
			given: mainDone,
			when: func(s *Session) ([]Event, error) {
				r := forB(PhaseExited, 9)
				r.ExitCode = 2
				return s.ReportKernel(r)
			},
			then: []Event{
				KernelExited{KernelID: kernelB, ExitCode: 2, Reason: ReasonTaskFinished, At: at(9)},
				SessionTerminated{Reason: ReasonTaskFailed, Result: ResultFailure, ExitCode: intp(0), At: at(9)},
			},
		},
		{
			name:  "a kernel still progressing while the session terminates is recorded, the session stays TERMINATING",
			given: append(append([]Event(nil), runA...), SessionTerminating{Reason: ReasonUserRequested, At: at(3)}),
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(forB(PhaseCreating, 4)) },
			then:  []Event{KernelCreating{KernelID: kernelB, At: at(4)}},
		},
	})
}

func TestDeriveSessionStatus(t *testing.T) {
	k := func(s SessionStatus) Kernel { return Kernel{status: s} }
	cases := []struct {
		current SessionStatus
		kernels []Kernel
		want    SessionStatus
	}{
		{StatusScheduled, []Kernel{k(StatusRunning), k(StatusPreparing)}, StatusPreparing},
		{StatusCreating, []Kernel{k(StatusRunning), k(StatusRunning)}, StatusRunning},
		{StatusRunning, []Kernel{k(StatusRunning), k(StatusError)}, StatusError},
		{StatusTerminating, []Kernel{k(StatusTerminated), k(StatusError)}, StatusError},
		{StatusRunning, []Kernel{k(StatusTerminated), k(StatusRunning)}, StatusTerminating},
		{StatusTerminating, []Kernel{k(StatusRunning), k(StatusRunning)}, StatusTerminating},
		{StatusTerminating, []Kernel{k(StatusTerminated), k(StatusCancelled)}, StatusTerminated},
		{StatusPending, []Kernel{k(StatusCancelled), k(StatusCancelled)}, StatusCancelled},
	}
	for _, c := range cases {
		if got := deriveSessionStatus(c.current, c.kernels); got != c.want {
			t.Errorf("derive(%s, %v) = %s, want %s", c.current, c.kernels, got, c.want)
		}
	}
}
