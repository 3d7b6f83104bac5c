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

type shareVFolderHandler struct{ deps }

func (h shareVFolderHandler) Handle(ctx context.Context, md Metadata, cmd ShareVFolder) (VFolderResult, error) {
	const op = "vfolder.share"
	user, err := h.shareTarget(ctx, op, cmd.Actor, cmd.UserID, cmd.Email)
	if err != nil {
		return VFolderResult{}, err
	}
	return h.updateFolder(ctx, op, md, cmd.Actor, cmd.FolderID, func(f *domain.VFolder, acc VFolderAccess, at time.Time) ([]domain.Event, error) {
		return f.Share(acc.Viewer, acc.Hosts, user, cmd.Permission, at)
	})
}

// shareTarget is the user a share or unshare is about: the id given, or
// the user of the e-mail address given.
func (d deps) shareTarget(ctx context.Context, op string, actor Principal, userID, email string) (string, error) {
	userID, email = strings.TrimSpace(userID), strings.TrimSpace(email)
	switch {
	case userID != "" && email != "":
		return "", domain.Invalid(op, "user_id", "give user_id or email, not both")
	case userID != "":
		return userID, nil
	case email == "":
		return "", domain.Invalid(op, "user_id", "must name a user (user_id or email)")
	}
	if _, err := d.vfAccess(ctx, op, actor); err != nil {
		return "", err
	}
	u, err := d.vf.Tenancy.UserByEmail(ctx, email)
	if domain.KindOf(err) == domain.KindNotFound {
		return "", domain.Invalid(op, "email", "no user with the e-mail address %q", email)
	}
	if err != nil {
		return "", err
	}
	return u.ID.String(), nil
}
