package readapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/vfolders"
)

const opListVFolders = "vfolder.list"

// listVFoldersResponse is the answer of GET /v1/vfolders: the folders, or
// a page of them; NextCursor is null on the last page.
type listVFoldersResponse struct {
	Items      []VFolderView `json:"items"`
	NextCursor *string       `json:"next_cursor"`
}

// listVFolders handles GET /v1/vfolders?relation=&status=&name=&limit=
// &cursor=: the folders the caller sees, by name, each with the caller's
// effective permission. relation takes own, shared, project (the default:
// all three) and domain (admins and monitors: every folder of their
// domain; superadmins: every folder), separated by commas; status one
// status or several separated by commas. With limit the answer is a page,
// and next_cursor reads the next; without it, every folder.
func (a *api) listVFolders(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	limit, err := QueryInt(c, opListVFolders, "limit", 0, 1, vfolders.MaxListLimit)
	if err != nil {
		return err
	}
	f := vfolders.Filter{Limit: limit, Cursor: strings.Clone(c.Query("cursor"))}
	if raw := c.Query("relation"); raw != "" {
		for _, r := range strings.Split(raw, ",") {
			f.Relations = append(f.Relations, vfolders.Relation(strings.TrimSpace(r)))
		}
	}
	if raw := c.Query("status"); raw != "" {
		for _, st := range strings.Split(raw, ",") {
			f.Statuses = append(f.Statuses, domain.VFolderStatus(strings.TrimSpace(st)))
		}
	}
	f.Name = strings.Clone(c.Query("name"))
	if err := a.WaitForPosition(c, opListVFolders); err != nil {
		return err
	}
	v, err := a.viewer(c, who)
	if err != nil {
		return err
	}
	page, err := a.VFolders.Folders.Page(c.UserContext(), v, f)
	if err != nil {
		return err
	}
	out := listVFoldersResponse{Items: make([]VFolderView, len(page.Folders))}
	for i, r := range page.Folders {
		out.Items[i] = ViewVFolder(r)
	}
	if page.NextCursor != "" {
		out.NextCursor = &page.NextCursor
	}
	return c.JSON(out)
}
