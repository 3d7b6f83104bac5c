package vfolders

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Apply implements projections.Projection. It mirrors the fold of
// domain.VFolder; the folder an event is about comes from its stream name
// (vfolder-<uuid>).
func (m *ReadModel) Apply(_ context.Context, tx projections.Tx, ev projections.Event) error {
	pos := int64(ev.Position)
	d := tx.Dialect()
	stream, err := domain.ParseStreamOf(domain.StreamVFolder, ev.Stream)
	if err != nil {
		return fmt.Errorf("vfolders: %s: %w", ev.Type, err)
	}
	id := stream.ID
	status := func(s domain.VFolderStatus, msg string, at any) {
		tx.Queue(m.sql.status, id, string(s), msg, at, pos)
	}
	switch e := ev.Payload.(type) {
	case domain.VFolderCreated:
		cloneOf := ""
		if e.CloneOf != uuid.Nil {
			cloneOf = e.CloneOf.String()
		}
		tx.Queue(m.sql.insertFolder, id, e.Name, e.Host, string(e.Owner.Kind), e.Owner.ID, e.Owner.Domain, e.Creator,
			string(e.UsageMode), string(e.Permission), e.Quota, e.Cloneable, cloneOf, string(e.Status), d.Time(e.At), pos)
	case domain.VFolderRenamed:
		tx.Queue(m.sql.rename, id, e.Name, d.Time(e.At), pos)
	case domain.VFolderInvited:
		inv := e.Invitation
		tx.Queue(m.sql.insertInvitation, inv.ID.String(), id, inv.Inviter, inv.Invitee, inv.Email, string(inv.Permission),
			string(inv.State), d.Time(inv.At), pos)
		tx.Queue(m.sql.touch, id, d.Time(inv.At), pos)
	case domain.VFolderInvitationAccepted:
		tx.Queue(m.sql.invitationState, e.InvitationID.String(), string(domain.InvitationAccepted), d.Time(e.At), pos)
		tx.Queue(m.sql.acceptMember, e.InvitationID.String(), pos)
		tx.Queue(m.sql.touch, id, d.Time(e.At), pos)
	case domain.VFolderInvitationRejected:
		tx.Queue(m.sql.invitationState, e.InvitationID.String(), string(domain.InvitationRejected), d.Time(e.At), pos)
		tx.Queue(m.sql.touch, id, d.Time(e.At), pos)
	case domain.VFolderInvitationCancelled:
		tx.Queue(m.sql.invitationState, e.InvitationID.String(), string(domain.InvitationCancelled), d.Time(e.At), pos)
		tx.Queue(m.sql.touch, id, d.Time(e.At), pos)
	case domain.VFolderLeft:
		tx.Queue(m.sql.deleteUser, id, e.UserID, KindMember)
		tx.Queue(m.sql.touch, id, d.Time(e.At), pos)
	case domain.VFolderShared:
		tx.Queue(m.sql.upsertUser, id, e.UserID, KindOverride, string(e.Permission), pos)
		tx.Queue(m.sql.touch, id, d.Time(e.At), pos)
	case domain.VFolderUnshared:
		tx.Queue(m.sql.deleteUser, id, e.UserID, KindOverride)
		tx.Queue(m.sql.touch, id, d.Time(e.At), pos)
	case domain.VFolderCloneFinished:
		status(e.Status, e.Message, d.Time(e.At))
	case domain.VFolderTrashed:
		status(domain.VFolderDeletePending, "", d.Time(e.At))
	case domain.VFolderRestored:
		status(domain.VFolderReady, "", d.Time(e.At))
	case domain.VFolderDeleteStarted:
		status(domain.VFolderDeleteOngoing, "", d.Time(e.At))
	case domain.VFolderDeleteFinished:
		status(e.Status, e.Message, d.Time(e.At))
	case domain.VFolderPurged:
		tx.Queue(m.sql.deleteUsers, id)
		tx.Queue(m.sql.deleteInvitations, id)
		tx.Queue(m.sql.deleteFolder, id)
	default:
		return fmt.Errorf("vfolders: unexpected event %s", ev.Type)
	}
	return nil
}
