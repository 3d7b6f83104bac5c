package usage

import (
	"context"
	"fmt"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Apply implements projections.Projection.
func (m *ReadModel) Apply(_ context.Context, tx projections.Tx, ev projections.Event) error {
	switch e := ev.Payload.(type) {
	case domain.UserCreated:
		tx.Queue(m.sql.insertUser, e.UserID.String(), e.Email, e.Username)
		return nil
	case domain.UserModified:
		s, err := domain.ParseStreamOf(domain.StreamUser, ev.Stream)
		if err != nil {
			return fmt.Errorf("usage: %s: %w", ev.Type, err)
		}
		tx.Queue(m.sql.renameUser, s.ID, e.Username)
		return nil
	case domain.AgentAllocated:
		kernel := e.KernelID.String()
		tx.Queue(m.sql.allocate, kernel, e.SessionID.String(), e.At.UnixMilli())
		for _, slot := range e.Slots.Names() {
			if v := e.Slots[slot]; v != 0 {
				tx.Queue(m.sql.allocateSlot, kernel, string(slot), int64(v))
			}
		}
		return nil
	case domain.AgentReleased:
		// Cut into days with the batch's other releases (Flush).
		m.held.hold(tx, e.KernelID.String(), e.At)
		return nil
	}
	stream, err := domain.ParseStreamOf(domain.StreamSession, ev.Stream)
	if err != nil {
		return fmt.Errorf("usage: %s: %w", ev.Type, err)
	}
	switch e := ev.Payload.(type) {
	case domain.SessionRequested:
		tx.Queue(m.sql.insertSession, stream.ID, e.Owner.UserID, e.Project, e.Domain)
	case domain.SessionScheduled:
		tx.Queue(m.sql.started, stream.ID, e.At.UTC().Format(DayLayout))
	default:
		return fmt.Errorf("usage: unexpected event %s", ev.Type)
	}
	return nil
}
