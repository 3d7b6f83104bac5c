package audit

import (
	"context"
	"fmt"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Apply implements projections.Projection: one row per run of sealed
// records, with its position, and its distinct keys.
func (m *ReadModel) Apply(_ context.Context, tx projections.Tx, ev projections.Event) error {
	sealed, ok := ev.Payload.(domain.AuditSealed)
	if !ok {
		return fmt.Errorf("audit: unexpected event %s", ev.Type)
	}
	if len(sealed.Records) == 0 {
		return nil
	}
	first, last := sealed.Records[0], sealed.Records[len(sealed.Records)-1]
	minAt, maxAt := first.Time, first.Time
	type key struct{ field, value string }
	keys := make(map[key]bool)
	for _, rec := range sealed.Records {
		r := rec.Record
		if r.Time.Before(minAt) {
			minAt = r.Time
		}
		if r.Time.After(maxAt) {
			maxAt = r.Time
		}
		for _, k := range []key{{keyActor, r.UserID}, {keyActor, r.AccessKey}, {keyAction, r.Action},
			{keyEntityType, r.EntityType}, {keyEntityID, r.EntityID}, {keyOutcome, string(r.Outcome)}} {
			if k.value != "" {
				keys[k] = true
			}
		}
	}
	d := tx.Dialect()
	tx.Queue(m.sql.insertRun, int64(last.Seq), int64(first.Seq), d.Time(minAt), d.Time(maxAt), int64(ev.Position))
	for k := range keys {
		tx.Queue(m.sql.insertKey, k.field, k.value, int64(last.Seq))
	}
	return nil
}
