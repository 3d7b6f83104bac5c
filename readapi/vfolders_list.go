package readapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/vfolders"
)

const opListVFolders = "vfolder.list"

// listVFoldersResponse is the answer of GET /v1/vfolders.
type listVFoldersResponse struct {
	Items []VFolderView `json:"items"`
}

// listVFolders handles GET /v1/vfolders?relation=&status=&name=: the
// folders the caller sees, by name, each with the caller's effective
// permission. relation takes own, shared, project (the default: all
// three) and domain (admins and monitors: every folder of their domain;
// superadmins: every folder), separated by commas.
func (a *api) listVFolders(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	var f vfolders.Filter
	if raw := c.Query("relation"); raw != "" {
		for _, r := range strings.Split(raw, ",") {
			f.Relations = append(f.Relations, vfolders.Relation(strings.TrimSpace(r)))
		}
	}
	f.Status = domain.VFolderStatus(strings.Clone(c.Query("status")))
	f.Name = strings.Clone(c.Query("name"))
	if err := a.WaitForPosition(c, opListVFolders); err != nil {
		return err
	}
	v, err := a.viewer(c, who)
	if err != nil {
		return err
	}
	rows, err := a.VFolders.Folders.Visible(c.UserContext(), v, f)
	if err != nil {
		return err
	}
	out := listVFoldersResponse{Items: make([]VFolderView, len(rows))}
	for i, r := range rows {
		out.Items[i] = ViewVFolder(r)
	}
	return c.JSON(out)
}
