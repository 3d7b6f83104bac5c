package commandapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// mkdirVFolder handles POST /v1/vfolders/{id}/files/mkdir {"path": ...,
// "parents": bool}: 201.
func (a *api) mkdirVFolder(c *fiber.Ctx) error {
	const op = "vfolder.files.mkdir"
	var req struct {
		Path    string `json:"path"`
		Parents bool   `json:"parents"`
	}
	if err := decodeBody(c, op, &req); err != nil {
		return err
	}
	g, ref, err := a.fileGrant(c, op, fileWrite)
	if err != nil {
		return err
	}
	if err := a.VFolders.Storage.Mkdir(c.UserContext(), ref, req.Path, req.Parents); err != nil {
		return pathError(err, "path")
	}
	return c.Status(http.StatusCreated).JSON(fileChanged{FolderID: g.FolderID, Path: req.Path})
}
