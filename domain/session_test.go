package domain

import (
	"testing"
)

func TestSessionSchedule(t *testing.T) {
	pA := place(kernelA, "a1", "GPU-0")
	runSessionCases(t, []sessionCase{
		{
			name:  "a pending session is scheduled with its agent and devices",
			given: []Event{batch()},
			when: func(s *Session) ([]Event, error) {
				return s.Schedule([]KernelPlacement{pA}, at(1))
			},
			then: []Event{scheduled(pA)},
			check: func(t *testing.T, s *Session) {
				k, _ := s.Kernel(kernelA)
				if s.Status() != StatusScheduled || s.StatusReason() != ReasonScheduled || !s.ScheduledAt().Equal(at(1)) ||
					k.AgentID() != "a1" || k.Status() != StatusScheduled || len(k.Devices()) != 1 || k.Devices()[0].Amount != q("0.5") {
					t.Fatalf("session %s/%s kernel %+v", s.Status(), s.StatusReason(), k)
				}
			},
		},
		{
			name:  "scheduling clears the pending reasons",
			given: []Event{batch(), SessionPendingUpdated{Reason: ReasonNoAvailableInstances, Details: []string{"no agent"}, Tries: 3, At: at(1)}},
			when: func(s *Session) ([]Event, error) {
				return s.Schedule([]KernelPlacement{pA}, at(1))
			},
			then: []Event{scheduled(pA)},
			check: func(t *testing.T, s *Session) {
				if len(s.PendingDetails()) != 0 {
					t.Fatalf("details %v", s.PendingDetails())
				}
			},
		},
		{
			name:  "scheduling a running session is a conflict",
			given: []Event{batch(), scheduled(pA), running(kernelA, 2), SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(2)}},
			when: func(s *Session) ([]Event, error) {
				return s.Schedule([]KernelPlacement{place(kernelA, "a2", "GPU-1")}, at(3))
			},
			err: ErrConflict,
		},
		{
			name:  "scheduling again with the same placement changes nothing",
			given: []Event{batch(), scheduled(pA)},
			when: func(s *Session) ([]Event, error) {
				return s.Schedule([]KernelPlacement{pA}, at(3))
			},
		},
		{
			name:  "scheduling an ended session with its old placement is a conflict",
			given: []Event{batch(), scheduled(pA), SessionErrored{Reason: ReasonAgentLost, At: at(2)}},
			when: func(s *Session) ([]Event, error) {
				return s.Schedule([]KernelPlacement{pA}, at(3))
			},
			err: ErrConflict,
		},
		{
			name:  "scheduling a cancelled session is a conflict",
			given: []Event{batch(), SessionCancelled{Reason: ReasonUserRequested, At: at(1)}},
			when: func(s *Session) ([]Event, error) {
				return s.Schedule([]KernelPlacement{pA}, at(2))
			},
			err: ErrConflict,
		},
		{
			name: "an unknown session is not found",
			when: func(s *Session) ([]Event, error) {
				return s.Schedule([]KernelPlacement{pA}, at(2))
			},
			err: ErrNotFound,
		},
		{
			name:  "devices must add up to the requested shares",
			given: []Event{batch()},
			when: func(s *Session) ([]Event, error) {
				p := pA
				p.Devices = []DeviceShare{{DeviceID: "GPU-0", Amount: q("0.25")}}
				return s.Schedule([]KernelPlacement{p}, at(1))
			},
			err: ErrInvalid,
		},
		{
			name:  "every kernel must be placed",
			given: []Event{requestedEvent(SessionBatch, ClusterSingleNode, kernelA, kernelB)},
			when: func(s *Session) ([]Event, error) {
				return s.Schedule([]KernelPlacement{pA}, at(1))
			},
			err: ErrInvalid,
		},
		{
			name:  "a kernel of another session cannot be placed",
			given: []Event{batch()},
			when: func(s *Session) ([]Event, error) {
				return s.Schedule([]KernelPlacement{place(otherID, "a1", "GPU-0")}, at(1))
			},
			err: ErrInvalid,
		},
		{
			name:  "a single-node session stays on one agent",
			given: []Event{requestedEvent(SessionBatch, ClusterSingleNode, kernelA, kernelB)},
			when: func(s *Session) ([]Event, error) {
				return s.Schedule([]KernelPlacement{pA, place(kernelB, "a2", "GPU-0")}, at(1))
			},
			err: ErrInvalid,
		},
		{
			name:  "a multi-node session may span agents; placements come out in kernel order",
			given: []Event{requestedEvent(SessionBatch, ClusterMultiNode, kernelA, kernelB)},
			when: func(s *Session) ([]Event, error) {
				return s.Schedule([]KernelPlacement{place(kernelB, "a2", "GPU-0"), pA}, at(1))
			},
			then: []Event{scheduled(pA, place(kernelB, "a2", "GPU-0"))},
		},
	})
}

func TestSessionUpdatePending(t *testing.T) {
	pending := SessionPendingUpdated{Reason: ReasonPredicateChecks, Details: []string{"keypair concurrency limit reached"}, Tries: 1, At: at(1)}
	runSessionCases(t, []sessionCase{
		{
			name:  "the reasons a pending session waits are recorded",
			given: []Event{batch()},
			when: func(s *Session) ([]Event, error) {
				return s.UpdatePending(pending.Reason, pending.Details, 1, at(1))
			},
			then: []Event{pending},
			check: func(t *testing.T, s *Session) {
				if s.Status() != StatusPending || s.StatusReason() != ReasonPredicateChecks || s.PendingTries() != 1 || len(s.PendingDetails()) != 1 {
					t.Fatalf("%s %s %d %v", s.Status(), s.StatusReason(), s.PendingTries(), s.PendingDetails())
				}
			},
		},
		{
			name:  "the same reasons again record nothing",
			given: []Event{batch(), pending},
			when: func(s *Session) ([]Event, error) {
				return s.UpdatePending(pending.Reason, pending.Details, 7, at(9))
			},
		},
		{
			name:  "changed reasons are recorded",
			given: []Event{batch(), pending},
			when: func(s *Session) ([]Event, error) {
				return s.UpdatePending(ReasonNoAvailableInstances, nil, 2, at(2))
			},
			then: []Event{SessionPendingUpdated{Reason: ReasonNoAvailableInstances, Tries: 2, At: at(2)}},
		},
		{
			name:  "a scheduled session is not pending",
			given: []Event{batch(), scheduled(place(kernelA, "a1", "GPU-0"))},
			when: func(s *Session) ([]Event, error) {
				return s.UpdatePending(ReasonNoAvailableInstances, nil, 2, at(2))
			},
			err: ErrConflict,
		},
		{
			name:  "a reason is required",
			given: []Event{batch()},
			when: func(s *Session) ([]Event, error) {
				return s.UpdatePending("", nil, 2, at(2))
			},
			err: ErrInvalid,
		},
	})
}

func TestSessionTerminate(t *testing.T) {
	pA := place(kernelA, "a1", "GPU-0")
	runningSession := []Event{batch(), scheduled(pA), running(kernelA, 2), SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(2)}}
	terminate := func(s *Session) ([]Event, error) { return s.Terminate(ReasonUserRequested, at(5)) }
	runSessionCases(t, []sessionCase{
		{
			name:  "terminating a pending session cancels it",
			given: []Event{batch()},
			when:  terminate,
			then:  []Event{SessionCancelled{Reason: ReasonUserRequested, At: at(5)}},
			check: func(t *testing.T, s *Session) {
				k, _ := s.Kernel(kernelA)
				if s.Status() != StatusCancelled || k.Status() != StatusCancelled || !s.TerminatedAt().Equal(at(5)) {
					t.Fatalf("session %s kernel %s", s.Status(), k.Status())
				}
			},
		},
		{
			name:  "terminating a scheduled session tears it down",
			given: []Event{batch(), scheduled(pA)},
			when:  terminate,
			then:  []Event{SessionTerminating{Reason: ReasonUserRequested, At: at(5)}},
		},
		{
			name:  "terminating a running session tears it down",
			given: runningSession,
			when:  terminate,
			then:  []Event{SessionTerminating{Reason: ReasonUserRequested, At: at(5)}},
			check: func(t *testing.T, s *Session) {
				if s.Status() != StatusTerminating || s.StatusReason() != ReasonUserRequested {
					t.Fatalf("%s %s", s.Status(), s.StatusReason())
				}
			},
		},
		{
			name:  "terminating twice is idempotent and keeps the first reason",
			given: append(runningSession, SessionTerminating{Reason: ReasonIdleTimeout, At: at(4)}),
			when:  terminate,
		},
		{
			name:  "terminating a terminated session is idempotent",
			given: append(runningSession, KernelExited{KernelID: kernelA, Reason: ReasonTaskFinished, At: at(3)}, SessionTerminated{Reason: ReasonTaskFinished, Result: ResultSuccess, ExitCode: intp(0), At: at(3)}),
			when:  terminate,
		},
		{
			name:  "terminating a cancelled session is idempotent",
			given: []Event{batch(), SessionCancelled{Reason: ReasonPendingTimeout, At: at(1)}},
			when:  terminate,
		},
		{
			name:  "terminating an errored session is idempotent",
			given: append(runningSession, SessionErrored{Reason: ReasonAgentLost, At: at(3)}),
			when:  terminate,
		},
		{
			name:  "a reason is required",
			given: runningSession,
			when:  func(s *Session) ([]Event, error) { return s.Terminate("", at(5)) },
			err:   ErrInvalid,
		},
		{
			name: "an unknown session is not found",
			when: terminate,
			err:  ErrNotFound,
		},
	})
}

func TestSessionCancel(t *testing.T) {
	cancel := func(s *Session) ([]Event, error) { return s.Cancel(ReasonPendingTimeout, at(5)) }
	runSessionCases(t, []sessionCase{
		{
			name:  "a pending session is cancelled",
			given: []Event{batch()},
			when:  cancel,
			then:  []Event{SessionCancelled{Reason: ReasonPendingTimeout, At: at(5)}},
		},
		{
			name:  "cancelling twice is idempotent",
			given: []Event{batch(), SessionCancelled{Reason: ReasonUserRequested, At: at(1)}},
			when:  cancel,
		},
		{
			name:  "a scheduled session cannot be cancelled",
			given: []Event{batch(), scheduled(place(kernelA, "a1", "GPU-0"))},
			when:  cancel,
			err:   ErrConflict,
		},
	})
}

func TestSessionFail(t *testing.T) {
	pA, pB := place(kernelA, "a1", "GPU-0"), place(kernelB, "a2", "GPU-0")
	multi := []Event{requestedEvent(SessionBatch, ClusterMultiNode, kernelA, kernelB), scheduled(pA, pB), running(kernelA, 2), KernelExited{KernelID: kernelB, ExitCode: 0, Reason: ReasonTaskFinished, At: at(3)}}
	fail := func(s *Session) ([]Event, error) { return s.Fail(ReasonAgentLost, "agent a1 lost", at(5)) }
	runSessionCases(t, []sessionCase{
		{
			name:  "failing a session errors every kernel that has not ended",
			given: multi,
			when:  fail,
			then:  []Event{SessionErrored{Reason: ReasonAgentLost, Message: "agent a1 lost", At: at(5)}},
			check: func(t *testing.T, s *Session) {
				a, _ := s.Kernel(kernelA)
				b, _ := s.Kernel(kernelB)
				if s.Status() != StatusError || a.Status() != StatusError || b.Status() != StatusTerminated {
					t.Fatalf("session %s, kernels %s %s", s.Status(), a.Status(), b.Status())
				}
				if got := s.KernelsToRelease(); len(got) != 2 {
					t.Fatalf("an errored session releases every placed kernel, got %d", len(got))
				}
			},
		},
		{
			name:  "failing an ended session changes nothing",
			given: []Event{batch(), SessionCancelled{Reason: ReasonUserRequested, At: at(1)}},
			when:  fail,
		},
	})
}

func TestRehydrateSessionRefusesBrokenStreams(t *testing.T) {
	for name, events := range map[string][]RecordedEvent{
		"event before requested": recorded([]Event{SessionCancelled{Reason: "x", At: at(1)}}),
		"requested twice":        recorded([]Event{batch(), batch()}),
		"unknown kernel":         recorded([]Event{batch(), running(otherID, 1)}),
		"agent event":            recorded([]Event{batch(), AgentLost{Reason: "x", At: at(1)}}),
		"revision gap":           {{Revision: 0, Event: batch()}, {Revision: 2, Event: SessionCancelled{Reason: "x", At: at(1)}}},
		"no payload":             {{Revision: 0}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := RehydrateSession(events); KindOf(err) != KindInternal || err == nil {
				t.Fatalf("err = %v, want an internal error", err)
			}
		})
	}
	if s, err := RehydrateSession(nil); err != nil || s.Exists() || s.Revision() != -1 {
		t.Fatalf("empty stream: %v exists=%v revision=%d", err, s.Exists(), s.Revision())
	}
}
