package domain

import "testing"

func TestSessionTransitions(t *testing.T) {
	allowed := []struct{ from, to SessionStatus }{
		{StatusPending, StatusScheduled},
		{StatusPending, StatusCancelled},
		{StatusPending, StatusError},
		{StatusScheduled, StatusPreparing},
		{StatusScheduled, StatusRunning},
		{StatusPreparing, StatusCreating},
		{StatusCreating, StatusRunning},
		{StatusRunning, StatusTerminating},
		{StatusRunning, StatusTerminated},
		{StatusRunning, StatusError},
		{StatusCreating, StatusTerminating},
		{StatusTerminating, StatusTerminated},
		{StatusTerminating, StatusError},
		// A kernel may end before its agent reported every phase.
		{StatusScheduled, StatusTerminated},
		{StatusCreating, StatusTerminated},
	}
	for _, c := range allowed {
		if !c.from.CanTransition(c.to) {
			t.Errorf("%s → %s should be allowed", c.from, c.to)
		}
	}
	forbidden := []struct{ from, to SessionStatus }{
		{StatusPending, StatusRunning},
		{StatusPending, StatusTerminating},
		{StatusRunning, StatusPending},
		{StatusRunning, StatusCancelled},
		{StatusRunning, StatusScheduled},
		{StatusTerminating, StatusRunning},
		{StatusTerminating, StatusTerminating},
		{StatusTerminated, StatusRunning},
		{StatusTerminated, StatusError},
		{StatusCancelled, StatusScheduled},
		{StatusError, StatusTerminated},
	}
	for _, c := range forbidden {
		if c.from.CanTransition(c.to) {
			t.Errorf("%s → %s should be rejected", c.from, c.to)
		}
	}
	for _, s := range []SessionStatus{StatusTerminated, StatusCancelled, StatusError} {
		if !s.IsTerminal() || s.HoldsResources() {
			t.Errorf("%s: terminal and holds nothing", s)
		}
	}
	if StatusPending.HoldsResources() || !StatusScheduled.HoldsResources() || !StatusTerminating.HoldsResources() {
		t.Error("HoldsResources")
	}
	for s, want := range map[SessionStatus]bool{
		StatusPending: false, StatusScheduled: true, StatusPreparing: true, StatusPulling: true, StatusPrepared: true,
		StatusCreating: true, StatusRunning: false, StatusTerminating: false, StatusTerminated: false, StatusError: false,
	} {
		if s.IsStarting() != want {
			t.Errorf("%s.IsStarting() = %v", s, !want)
		}
	}
}
