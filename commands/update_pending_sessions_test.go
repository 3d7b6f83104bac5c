package commands_test

import (
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// TestUpdatePendingSessions: known sessions get their reasons in one
// write; a session that moved since its revision was known (a reason
// recorded meanwhile) is decided again on its stream; one without a known
// revision is decided on its stream; a session that is gone fails alone.
func TestUpdatePendingSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b, c, gone := e.requestSession(t, sessionSpec("")), e.requestSession(t, sessionSpec("")), e.requestSession(t, sessionSpec("")), e.requestSession(t, sessionSpec(""))
	rev := int64(0) // each stream holds session.requested
	if _, err := e.handlers.UpdatePendingSession.Handle(ctx, e.md, commands.UpdatePendingSession{SessionID: b.SessionID, Reason: domain.ReasonNoAvailableInstances, Tries: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.handlers.CancelPendingSession.Handle(ctx, e.md, commands.CancelPendingSession{SessionID: gone.SessionID, Reason: domain.ReasonUserRequested}); err != nil {
		t.Fatal(err)
	}
	update := func(id commands.RequestSessionResult, known *int64) commands.UpdatePendingSession {
		return commands.UpdatePendingSession{SessionID: id.SessionID, Reason: domain.ReasonPredicateChecks, Details: []string{"quota"}, Tries: 2, KnownRevision: known}
	}
	res, err := e.handlers.UpdatePendingSessions.Handle(ctx, e.md, commands.UpdatePendingSessions{Updates: []commands.UpdatePendingSession{
		update(a, &rev), update(b, &rev), update(c, nil), update(gone, &rev),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failed) != 1 || domain.KindOf(res.Failed[gone.SessionID]) != domain.KindConflict {
		t.Fatalf("failed %v", res.Failed)
	}
	for _, r := range []commands.RequestSessionResult{a, b, c} {
		s := e.session(t, r.SessionID)
		if s.StatusReason() != domain.ReasonPredicateChecks || len(s.PendingDetails()) != 1 {
			t.Errorf("session %s: %s %v", r.SessionID, s.StatusReason(), s.PendingDetails())
		}
		if res.Position < e.lastPosition(t, domain.SessionStream(r.SessionID).String()) {
			t.Errorf("position %d is before the last write", res.Position)
		}
	}
	wantTypes(t, e.types(t, domain.SessionStream(b.SessionID).String()), domain.TypeSessionRequested, domain.TypeSessionPendingUpdated, domain.TypeSessionPendingUpdated)
}
