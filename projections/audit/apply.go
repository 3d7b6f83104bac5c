package audit

import (
	"context"
	"fmt"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Apply implements projections.Projection: one row per sealed record,
// keeping the stored JSON verbatim.
func (m *ReadModel) Apply(_ context.Context, tx projections.Tx, ev projections.Event) error {
	rec, ok := ev.Payload.(domain.AuditRecorded)
	if !ok {
		return fmt.Errorf("audit: unexpected event %s", ev.Type)
	}
	r := rec.Record
	tx.Queue(m.sql.insert, int64(r.Seq), tx.Dialect().Time(r.Time), r.UserID, r.AccessKey, r.Action,
		r.EntityType, r.EntityID, string(r.Outcome), r.Status, string(ev.Data), int64(ev.Position))
	return nil
}
