package domain

import "testing"

func TestSessionForceTerminate(t *testing.T) {
	two := requestedEvent(SessionBatch, ClusterSingleNode, kernelA, kernelB)
	placed := scheduled(place(kernelA, "a1", "GPU-0"), place(kernelB, "a1", "GPU-1"))
	terminating := SessionTerminating{Reason: ReasonUserRequested, At: at(4)}
	force := func(s *Session) ([]Event, error) { return s.ForceTerminate(ReasonForceTerminated, at(9)) }
	runSessionCases(t, []sessionCase{
		{
			name:  "a terminating session's remaining kernels and the session end force-terminated",
			given: []Event{two, placed, running(kernelA, 2), KernelExited{KernelID: kernelB, ExitCode: 0, Reason: ReasonUserRequested, At: at(5)}, terminating},
			when:  force,
			then: []Event{
				KernelTerminated{KernelID: kernelA, Reason: ReasonForceTerminated, At: at(9)},
				SessionTerminated{Reason: ReasonForceTerminated, Result: ResultFailure, At: at(9)},
			},
			check: func(t *testing.T, s *Session) {
				a, _ := s.Kernel(kernelA)
				if s.Status() != StatusTerminated || s.StatusReason() != ReasonForceTerminated || a.Status() != StatusTerminated ||
					len(s.KernelsToRelease()) != 2 {
					t.Fatalf("session %s/%s kernel %s, to release %d", s.Status(), s.StatusReason(), a.Status(), len(s.KernelsToRelease()))
				}
			},
		},
		{
			name:  "the main kernel's exit code is kept",
			given: []Event{two, placed, KernelExited{KernelID: kernelA, ExitCode: 7, Reason: ReasonTaskFailed, At: at(3)}, SessionTerminating{Reason: ReasonTaskFailed, At: at(3)}},
			when:  force,
			then: []Event{
				KernelTerminated{KernelID: kernelB, Reason: ReasonForceTerminated, At: at(9)},
				SessionTerminated{Reason: ReasonForceTerminated, Result: ResultFailure, ExitCode: intp(7), At: at(9)},
			},
		},
		{
			name:  "an ended session changes nothing",
			given: []Event{batch(), scheduled(place(kernelA, "a1", "GPU-0")), SessionErrored{Reason: ReasonAgentLost, At: at(2)}},
			when:  force,
		},
		{
			name:  "a running session must be terminated first",
			given: []Event{batch(), scheduled(place(kernelA, "a1", "GPU-0")), running(kernelA, 2)},
			when:  force,
			err:   ErrConflict,
		},
		{
			name:  "a reason is required",
			given: []Event{two, placed, terminating},
			when:  func(s *Session) ([]Event, error) { return s.ForceTerminate("", at(9)) },
			err:   ErrInvalid,
		},
	})
}
