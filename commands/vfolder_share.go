package commands

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// ShareVFolder sets a per-user permission on a project folder (an
// override of the folder's permission for one member), named by user id
// or by e-mail address. Setting the permission the user has already
// appends nothing.
type ShareVFolder struct {
	Actor      Principal
	FolderID   uuid.UUID
	UserID     string
	Email      string
	Permission domain.VFolderPermission
}

func (ShareVFolder) CommandName() string { return "vfolder.share" }

type shareVFolderHandler struct{ vfolderParts }

// newShareVFolderHandler builds the handler over the vfolder parts.
func newShareVFolderHandler(parts vfolderParts) shareVFolderHandler {
	return shareVFolderHandler{parts}
}

func (h shareVFolderHandler) Handle(ctx context.Context, md Metadata, cmd ShareVFolder) (VFolderResult, error) {
	const op = "vfolder.share"
	target, err := h.shareTarget(ctx, op, cmd.Actor, cmd.UserID, cmd.Email, true)
	if err != nil {
		return VFolderResult{}, err
	}
	return h.updateFolder(ctx, op, md, cmd.Actor, cmd.FolderID, func(f *domain.VFolder, acc VFolderAccess, at time.Time) ([]domain.Event, error) {
		user, err := target.in(op, f, acc.Viewer)
		if err != nil {
			return nil, err
		}
		return f.Share(acc.Viewer, acc.Hosts, user, cmd.Permission, at)
	})
}

// shareTarget is the user a share or unshare is about: the id given, or
// the user of the e-mail address given.
type shareTarget struct {
	userID  string
	address *addressee
}

// shareTarget reads the request's user: an e-mail address is looked up
// here, and answered on the folder (shareTarget.in); so is a user id when
// mustExist (a share: a permission is only given to a user of the
// folder's domain; an unshare may remove one whose user is gone).
func (d vfolderParts) shareTarget(ctx context.Context, op string, actor Principal, userID, email string, mustExist bool) (shareTarget, error) {
	userID, email = strings.TrimSpace(userID), strings.TrimSpace(email)
	switch {
	case userID != "" && email != "":
		return shareTarget{}, domain.Invalid(op, "user_id", "give user_id or email, not both")
	case userID != "" && mustExist:
		if _, err := d.vfAccess(ctx, op, actor); err != nil {
			return shareTarget{}, err
		}
		a, err := d.lookUpUserID(ctx, userID)
		if err != nil {
			return shareTarget{}, err
		}
		return shareTarget{address: &a}, nil
	case userID != "":
		return shareTarget{userID: userID}, nil
	case email == "":
		return shareTarget{}, domain.Invalid(op, "user_id", "must name a user (user_id or email)")
	}
	if _, err := d.vfAccess(ctx, op, actor); err != nil {
		return shareTarget{}, err
	}
	a, err := d.lookUpAddress(ctx, email)
	if err != nil {
		return shareTarget{}, err
	}
	return shareTarget{address: &a}, nil
}

// in is the target's user id on folder f, which v acts on (see
// addressee.in for an e-mail address).
func (t shareTarget) in(op string, f *domain.VFolder, v domain.VFolderViewer) (string, error) {
	if t.address == nil {
		return t.userID, nil
	}
	u, err := t.address.in(op, f, v)
	if err != nil {
		return "", err
	}
	return u.ID.String(), nil
}
