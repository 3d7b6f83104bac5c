package readapi

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/infra/vfstorage"
	"github.com/cairnhq/cairn/projections/vfolders"
)

const opGetVFolder = "vfolder.get"

// vfolderDetail is the answer of GET /v1/vfolders/{id}: the folder, its
// usage measured on its storage host (null while it has no data: cloning
// or deleted), and who it is shared with (for its managers).
type vfolderDetail struct {
	VFolderView
	Usage *usageView    `json:"usage"`
	Users []vfolderUser `json:"users"`
}

type usageView struct {
	Bytes int64 `json:"bytes"`
	Files int64 `json:"files"`
}

type vfolderUser = vfolders.User

// getVFolder handles GET /v1/vfolders/{id}.
func (a *api) getVFolder(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	id, err := FolderID(c, opGetVFolder)
	if err != nil {
		return err
	}
	if err := a.WaitForPosition(c, opGetVFolder); err != nil {
		return err
	}
	v, err := a.VisibleFolder(c, who, opGetVFolder, id)
	if err != nil {
		return err
	}
	out := vfolderDetail{VFolderView: ViewVFolder(v), Users: []vfolderUser{}}
	u, err := a.VFolders.Storage.Usage(c.UserContext(), vfstorage.Ref{Host: v.Host, ID: v.ID})
	switch {
	case err == nil:
		out.Usage = &usageView{Bytes: u.Bytes, Files: u.Files}
	case !errors.Is(err, vfstorage.ErrNoFolder):
		return err
	}
	// Its managers: the owner, and the administrators of its domain
	// (whatever relation they see it through: an admin may also be a
	// member of the project that owns it).
	manages := v.Relation == vfolders.RelationOwn || who.IsSuperadmin() || (who.Role == RoleAdmin && who.Domain == v.Owner.Domain)
	if v.Effective.CanDeleteFiles() && manages {
		if out.Users, err = a.VFolders.Folders.Users(c.UserContext(), v.ID); err != nil {
			return err
		}
	}
	return c.JSON(out)
}
