package agents

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Apply implements projections.Projection. It mirrors the fold of
// domain.Agent (agent_rehydrate.go).
func (m *ReadModel) Apply(ctx context.Context, tx projections.Tx, ev projections.Event) error {
	id, err := agentIDFromStream(ev.Stream)
	if err != nil {
		return err
	}
	pos := int64(ev.Position)
	d := tx.Dialect()
	switch e := ev.Payload.(type) {
	case domain.AgentRegistered:
		capacity, err := jsonText(e.Capacity)
		if err != nil {
			return err
		}
		devices, err := jsonText(nonNilDevices(e.Devices))
		if err != nil {
			return err
		}
		return exec(ctx, tx, m.sql.register, id, e.Architecture, string(domain.AgentStatusAlive), capacity, devices, d.Time(e.At), pos)
	case domain.AgentAllocated:
		slots, err := jsonText(e.Slots)
		if err != nil {
			return err
		}
		devices, err := jsonText(nonNilShares(e.Devices))
		if err != nil {
			return err
		}
		if err := exec(ctx, tx, m.sql.allocate, id, e.KernelID.String(), e.SessionID.String(), slots, devices, d.Time(e.At), pos); err != nil {
			return err
		}
		return m.refreshOccupancy(ctx, tx, id, pos)
	case domain.AgentReleased:
		if err := exec(ctx, tx, m.sql.release, id, e.KernelID.String()); err != nil {
			return err
		}
		return m.refreshOccupancy(ctx, tx, id, pos)
	case domain.AgentLost:
		return exec(ctx, tx, m.sql.setStatus, id, string(domain.AgentStatusLost), d.Time(e.At), nil, pos)
	case domain.AgentRejoined:
		return exec(ctx, tx, m.sql.setStatus, id, string(domain.AgentStatusAlive), nil, d.Time(e.At), pos)
	case domain.AgentDisconnected:
		return exec(ctx, tx, m.sql.setStatus, id, string(domain.AgentStatusDisconnected), nil, nil, pos)
	case domain.AgentReconnected:
		return exec(ctx, tx, m.sql.setStatus, id, string(domain.AgentStatusAlive), nil, d.Time(e.At), pos)
	default:
		return fmt.Errorf("agents: unexpected event %s", ev.Type)
	}
}

// refreshOccupancy sums the agent's allocations again: occupied slots,
// share of every device, and their count.
func (m *ReadModel) refreshOccupancy(ctx context.Context, tx projections.Tx, id string, pos int64) (err error) {
	rows, err := tx.Query(ctx, m.sql.allocations, id)
	if err != nil {
		return err
	}
	occupied := domain.Slots{}
	perDevice := map[string]domain.Quantity{}
	n := 0
	for rows.Next() {
		var slotsText, devicesText string
		if err := rows.Scan(&slotsText, &devicesText); err != nil {
			return closeWith(rows, err)
		}
		var slots domain.Slots
		var shares []domain.DeviceShare
		if err := json.Unmarshal([]byte(slotsText), &slots); err != nil {
			return closeWith(rows, fmt.Errorf("agents: allocation slots: %w", err))
		}
		if err := json.Unmarshal([]byte(devicesText), &shares); err != nil {
			return closeWith(rows, fmt.Errorf("agents: allocation devices: %w", err))
		}
		occupied = occupied.Add(slots)
		for _, s := range shares {
			perDevice[s.DeviceID] += s.Amount
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return closeWith(rows, err)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	occupiedText, err := jsonText(occupied)
	if err != nil {
		return err
	}
	shares := make(map[string]string, len(perDevice))
	for id, q := range perDevice {
		shares[id] = q.String()
	}
	sharesText, err := jsonText(shares)
	if err != nil {
		return err
	}
	return exec(ctx, tx, m.sql.occupancy, id, occupiedText, sharesText, n, pos)
}

func closeWith(rows projections.Rows, err error) error {
	if cerr := rows.Close(); cerr != nil {
		return fmt.Errorf("%w (and closing the rows: %v)", err, cerr)
	}
	return err
}

// agentIDFromStream returns the agent id of an agent stream ("agent-<id>",
// domain.AgentStream).
func agentIDFromStream(stream string) (string, error) {
	s, err := domain.ParseStreamOf(domain.StreamAgent, stream)
	if err != nil {
		return "", fmt.Errorf("agents: %w", err)
	}
	return s.ID, nil
}

// exec queues a write (see projections.Tx.Queue): its failure fails the
// batch, naming this event.
func exec(_ context.Context, tx projections.Tx, query string, args ...any) error {
	tx.Queue(query, args...)
	return nil
}

// jsonText encodes v for a JSON column (TEXT on SQLite, jsonb on
// PostgreSQL: both take the text).
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("agents: encode %T: %w", v, err)
	}
	return string(b), nil
}

func nonNilDevices(d []domain.Device) []domain.Device {
	if d == nil {
		return []domain.Device{}
	}
	return d
}

func nonNilShares(s []domain.DeviceShare) []domain.DeviceShare {
	if s == nil {
		return []domain.DeviceShare{}
	}
	return s
}
