package agents

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Filter selects the agents ListAgents returns.
type Filter struct {
	// Status keeps the agents in this status (alive, lost); empty keeps
	// all.
	Status domain.AgentStatus
}

// ListAgents returns the agents matching f, by id.
func (m *ReadModel) ListAgents(ctx context.Context, f Filter) ([]Agent, error) {
	const op = "agents.list"
	var (
		rows projections.Rows
		err  error
	)
	switch f.Status {
	case "":
		rows, err = m.db.Query(ctx, m.sql.list)
	case domain.AgentStatusAlive, domain.AgentStatusDisconnected, domain.AgentStatusLost:
		rows, err = m.db.Query(ctx, m.sql.listStatus, string(f.Status))
	default:
		return nil, domain.Invalid(op, "status", "unknown agent status %q (alive, disconnected, lost)", f.Status)
	}
	if err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	out := []Agent{}
	for rows.Next() {
		a, err := scanAgent(rows)
		if err != nil {
			return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Err: closeWith(rows, err)}
		}
		out = append(out, a)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	return out, nil
}

// GetAgent returns one agent, or a KindNotFound error.
func (m *ReadModel) GetAgent(ctx context.Context, id string) (Agent, error) {
	const op = "agents.get"
	a, err := scanAgent(m.db.QueryRow(ctx, m.sql.get, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Agent{}, domain.Errorf(op, domain.KindNotFound, "agent %q not found", id)
	case err != nil:
		return Agent{}, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	return a, nil
}

// scanAgent reads one row of agentColumns.
func scanAgent(row projections.Row) (Agent, error) {
	var (
		a                                                   Agent
		status, capacity, devices, occupied, deviceOccupied string
		registeredAt, lastSeenAt, lostAt                    projections.NullTime
		position                                            int64
	)
	if err := row.Scan(&a.ID, &a.Architecture, &status, &capacity, &devices, &occupied, &deviceOccupied,
		&a.Allocations, &registeredAt, &lastSeenAt, &lostAt, &position); err != nil {
		return Agent{}, err
	}
	a.Status = domain.AgentStatus(status)
	a.RegisteredAt, a.LastSeenAt, a.LostAt = registeredAt.Time, lastSeenAt.Time, lostAt.Ptr()
	a.Position = uint64(position)
	var (
		registered []domain.Device
		shares     map[string]string
	)
	for _, f := range []struct {
		name string
		text string
		dst  any
	}{
		{"capacity", capacity, &a.Capacity},
		{"occupied", occupied, &a.Occupied},
		{"devices", devices, &registered},
		{"device_occupied", deviceOccupied, &shares},
	} {
		if err := json.Unmarshal([]byte(f.text), f.dst); err != nil {
			return Agent{}, fmt.Errorf("agents: agent %s: column %s: %w", a.ID, f.name, err)
		}
	}
	a.Free = a.Capacity.Sub(a.Occupied)
	a.Devices = make([]Device, len(registered))
	for i, d := range registered {
		occ := shares[d.ID]
		if occ == "" {
			occ = "0"
		}
		a.Devices[i] = Device{Device: d, Occupied: occ}
	}
	return a, nil
}
