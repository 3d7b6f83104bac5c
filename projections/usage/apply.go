package usage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Apply implements projections.Projection.
func (m *ReadModel) Apply(ctx context.Context, tx projections.Tx, ev projections.Event) error {
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
		return m.release(ctx, tx, e)
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

// release splits the kernel's span from its allocation to e.At into its
// days and closes the kernel. A kernel the read model does not hold (never
// allocated, or already released) changes nothing.
func (m *ReadModel) release(ctx context.Context, tx projections.Tx, e domain.AgentReleased) error {
	kernel := e.KernelID.String()
	var allocated int64
	switch err := tx.QueryRow(ctx, m.sql.allocatedAt, kernel).Scan(&allocated); {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("usage: kernel %s: %w", kernel, err)
	}
	for _, p := range splitDays(time.UnixMilli(allocated), e.At) {
		tx.Queue(m.sql.day, kernel, p.day, p.millis)
	}
	tx.Queue(m.sql.release, kernel, e.At.UnixMilli())
	return nil
}
