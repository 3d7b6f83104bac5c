package commandapi

import (
	"strings"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

// listFilesResponse is the answer of GET /v1/vfolders/{id}/files: one
// page of a directory in name order; next_cursor is null on the last.
type listFilesResponse struct {
	Path       string     `json:"path"`
	Items      []fileView `json:"items"`
	NextCursor *string    `json:"next_cursor"`
}

// listVFolderFiles handles GET /v1/vfolders/{id}/files?path=&cursor=&limit=
// (path: a directory relative to the folder's root; default the root).
func (a *api) listVFolderFiles(c *fiber.Ctx) error {
	const op = "vfolder.files.list"
	limit, err := readapi.QueryInt(c, op, "limit", 0, 1, vfstorage.MaxListLimit)
	if err != nil {
		return err
	}
	_, ref, err := a.fileGrant(c, op, fileRead)
	if err != nil {
		return err
	}
	dir := strings.Clone(c.Query("path"))
	page, err := a.VFolders.Storage.ListFiles(c.UserContext(), ref, dir, vfstorage.ListOptions{After: strings.Clone(c.Query("cursor")), Limit: limit})
	if err != nil {
		return pathError(err, "path")
	}
	out := listFilesResponse{Path: dir, Items: make([]fileView, len(page.Entries))}
	for i, e := range page.Entries {
		out.Items[i] = viewFile(e)
	}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	return c.JSON(out)
}
