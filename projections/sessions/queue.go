package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Queued is a PENDING session with what placement checks besides its
// slots: the scheduler's queue as the read model knows it.
type Queued struct {
	Session
	// Seq is the position of its session.requested: the queue's order
	// among sessions requested at the same time.
	Seq uint64
	// StartsAt, when set, is the earliest time it may start.
	StartsAt time.Time
	// Architecture is the CPU architecture it needs; empty accepts any.
	Architecture string
	// Dependencies must finish successfully first.
	Dependencies []uuid.UUID
}

// Outcome is how a session stands, for the sessions that depend on it.
type Outcome struct {
	Status domain.SessionStatus
	Result domain.SessionResult
}

// Pending returns every PENDING session with its kernels, in request
// order, in one query: what the scheduler considers in a round.
func (m *ReadModel) Pending(ctx context.Context) ([]Queued, error) {
	const op = "sessions.pending"
	rows, err := m.db.Query(ctx, m.db.SQL(`SELECT `+sessionColumns+`, `+kernelColumns+`,
       s.starts_at, s.architecture, s.dependencies
  FROM {schema}.sessions s JOIN {schema}.kernels k ON k.session_id = s.id
 WHERE s.status = $1
 ORDER BY s.created_position, k.idx`), string(domain.StatusPending))
	if err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	out, err := scanQueued(rows)
	if err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
	}
	return out, nil
}

// scanQueued reads rows of the Pending query and closes them.
func scanQueued(rows projections.Rows) (_ []Queued, err error) {
	defer func() {
		if cerr := rows.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	out := []Queued{}
	for rows.Next() {
		var (
			r        sessionRow
			startsAt projections.NullTime
			arch     string
			deps     string
		)
		if err := rows.Scan(append(r.dest(), &startsAt, &arch, &deps)...); err != nil {
			return nil, fmt.Errorf("sessions: scan: %w", err)
		}
		s, k, err := r.decode()
		if err != nil {
			return nil, err
		}
		if n := len(out); n == 0 || out[n-1].ID != s.ID {
			q := Queued{Session: s, Seq: uint64(r.createdPos), StartsAt: startsAt.Time, Architecture: arch}
			if err := json.Unmarshal([]byte(deps), &q.Dependencies); err != nil {
				return nil, fmt.Errorf("sessions: session %s: column dependencies: %w", s.ID, err)
			}
			out = append(out, q)
		}
		out[len(out)-1].Kernels = append(out[len(out)-1].Kernels, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: read: %w", err)
	}
	for i := range out {
		out[i].placement()
	}
	return out, nil
}

// Outcomes returns how each of the sessions stands, in one query; a
// session the read model does not know is missing from the map.
func (m *ReadModel) Outcomes(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]Outcome, error) {
	const op = "sessions.outcomes"
	out := map[uuid.UUID]Outcome{}
	if len(ids) == 0 {
		return out, nil
	}
	ph := make([]string, len(ids))
	args := make([]any, len(ids))
	for i, id := range ids {
		ph[i], args[i] = "$"+strconv.Itoa(i+1), id.String()
	}
	rows, err := m.db.Query(ctx, m.db.SQL(`SELECT id, status, result FROM {schema}.sessions WHERE id IN (`+strings.Join(ph, ", ")+`)`), args...)
	if err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	for rows.Next() {
		var id, status, result string
		if err := rows.Scan(&id, &status, &result); err != nil {
			return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Err: errors.Join(err, rows.Close())}
		}
		sid, err := uuid.Parse(id)
		if err != nil {
			return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Err: errors.Join(err, rows.Close())}
		}
		out[sid] = Outcome{Status: domain.SessionStatus(status), Result: domain.SessionResult(result)}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	return out, nil
}
