package audit

import (
	"context"
	"fmt"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Apply implements projections.Projection: one row per sealed record,
// keeping the record's stored JSON verbatim.
func (m *ReadModel) Apply(_ context.Context, tx projections.Tx, ev projections.Event) error {
	sealed, ok := ev.Payload.(domain.AuditSealed)
	if !ok {
		return fmt.Errorf("audit: unexpected event %s", ev.Type)
	}
	d := tx.Dialect()
	for _, rec := range sealed.Records {
		r := rec.Record
		tx.Queue(m.sql.insert, int64(r.Seq), d.Time(r.Time), r.UserID, r.AccessKey, r.Action,
			r.EntityType, r.EntityID, string(r.Outcome), r.Status, string(rec.Raw), int64(ev.Position))
	}
	return nil
}
