package occupancy

import (
	"context"
	"fmt"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/cairnhq/cairn/projections"
)

// Apply implements projections.Projection. It mirrors quota.Ledger: the
// same facts, as rows, and the totals they add up to, each change of the
// totals queued before the fact rows it reads change.
func (m *ReadModel) Apply(_ context.Context, tx projections.Tx, ev projections.Event) error {
	pos := int64(ev.Position)
	switch e := ev.Payload.(type) {
	case domain.AgentAllocated:
		kernel, session := e.KernelID.String(), e.SessionID.String()
		for _, slot := range e.Slots.Names() {
			if v := e.Slots[slot]; v != 0 {
				tx.Queue(m.sql.countAllocated, kernel, string(slot), session, int64(v))
				tx.Queue(m.sql.allocate, kernel, string(slot), session, int64(v))
			}
		}
		return nil
	case domain.AgentReleased:
		tx.Queue(m.sql.countReleased, e.KernelID.String())
		tx.Queue(m.sql.release, e.KernelID.String())
		tx.Queue(m.sql.forget, e.SessionID.String(), phaseEnded)
		return nil
	}
	stream, err := domain.ParseStreamOf(domain.StreamSession, ev.Stream)
	if err != nil {
		return fmt.Errorf("occupancy: %s: %w", ev.Type, err)
	}
	sid := stream.ID
	switch e := ev.Payload.(type) {
	case domain.SessionRequested:
		s := quota.SessionOf(e)
		tx.Queue(m.sql.insertSession, sid, s.Owner.AccessKey, s.Owner.UserID, s.Key(quota.ScopeProject), s.Domain, phasePending, pos)
		for _, slot := range s.Requested.Names() {
			tx.Queue(m.sql.insertRequested, sid, string(slot), int64(s.Requested[slot]))
		}
		tx.Queue(m.sql.countRequested, sid, pos)
	case domain.SessionScheduled:
		tx.Queue(m.sql.countScheduled, sid)
		tx.Queue(m.sql.scheduled, sid, phaseActive, phasePending, pos)
		tx.Queue(m.sql.dropRequested, sid)
	case domain.SessionTerminated, domain.SessionCancelled, domain.SessionErrored:
		tx.Queue(m.sql.countEnded, sid)
		tx.Queue(m.sql.ended, sid, phaseEnded, pos)
		tx.Queue(m.sql.dropRequested, sid)
		tx.Queue(m.sql.forget, sid, phaseEnded)
	default:
		return fmt.Errorf("occupancy: unexpected event %s", ev.Type)
	}
	return nil
}

var _ projections.Flusher = (*ReadModel)(nil)

// Flush implements projections.Flusher: the totals a batch brought back
// to 0 go, so the table holds only the subjects that hold or queue
// something.
func (m *ReadModel) Flush(_ context.Context, tx projections.Tx) error {
	tx.Queue(m.sql.dropZeros)
	return nil
}
