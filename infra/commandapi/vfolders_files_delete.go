package commandapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
)

// deleteVFolderFile handles DELETE /v1/vfolders/{id}/files?path=&recursive=:
// a file, a symbolic link or a directory (a non-empty one with
// recursive=true). It needs the wd permission.
func (a *api) deleteVFolderFile(c *fiber.Ctx) error {
	const op = "vfolder.files.delete"
	path := strings.Clone(c.Query("path"))
	if path == "" {
		return domain.Invalid(op, "path", "required (the folder itself is deleted with DELETE /v1/vfolders/{id})")
	}
	recursive := false
	switch c.Query("recursive") {
	case "", "false":
	case "true":
		recursive = true
	default:
		return domain.Invalid(op, "recursive", "must be true or false")
	}
	g, ref, err := a.fileGrant(c, op, fileRemove)
	if err != nil {
		return err
	}
	if err := a.VFolders.Storage.Remove(c.UserContext(), ref, path, recursive); err != nil {
		return pathError(err, "path")
	}
	return c.JSON(fileChanged{FolderID: g.FolderID, Path: path})
}
