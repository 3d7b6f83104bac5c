package audit

import (
	"context"
	"fmt"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Apply implements projections.Projection: one row per run of sealed
// records, with its position, and its distinct keys.
func (m *ReadModel) Apply(ctx context.Context, tx projections.Tx, ev projections.Event) error {
	var sealed domain.AuditSealed
	switch p := ev.Payload.(type) {
	case domain.AuditSealed:
		sealed = p
	case domain.UserCreated:
		tx.Queue(m.sql.insertOwner, ownerUser, p.UserID.String(), p.Domain)
		return nil
	case domain.KeypairIssued:
		tx.Queue(m.sql.insertOwner, ownerKeypair, p.AccessKey, p.Domain)
		return nil
	case domain.SessionRequested:
		tx.Queue(m.sql.insertOwner, ownerSession, p.SessionID.String(), p.Domain)
		return nil
	case domain.VFolderCreated:
		tx.Queue(m.sql.insertOwner, ownerVFolder, p.FolderID.String(), p.Owner.Domain)
		return nil
	case domain.TokenIssued:
		tx.Queue(m.sql.insertOwner, ownerToken, p.TokenID.String(), p.Domain)
		return nil
	default:
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
	domains, err := m.domainsOf(ctx, tx, sealed.Records)
	if err != nil {
		return err
	}
	for d, seqs := range domains {
		tx.Queue(m.sql.insertDomain, d, int64(last.Seq), encodeSeqs(seqs))
	}
	return nil
}
