package sessions

import (
	"context"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// GetSession returns the session with its kernels, or a KindNotFound
// error when the read model has no such session (yet: wait for the
// position of the request first, see projections.Projector.WaitFor).
func (m *ReadModel) GetSession(ctx context.Context, id uuid.UUID) (Session, error) {
	const op = "sessions.get"
	rows, err := m.db.Query(ctx, m.sql.getSession, id.String())
	if err != nil {
		return Session{}, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	found, err := scanSessions(rows)
	if err != nil {
		return Session{}, &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
	}
	if len(found) == 0 {
		return Session{}, domain.Errorf(op, domain.KindNotFound, "session %s not found", id)
	}
	return found[0], nil
}
