package commandapi

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
)

// moveVFolderFile handles POST /v1/vfolders/{id}/files/move {"from": ...,
// "to": ...}: renames or moves a file or directory inside the folder (the
// destination must not exist).
func (a *api) moveVFolderFile(c *fiber.Ctx) error {
	const op = "vfolder.files.move"
	var req struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
	if err := decodeBody(c, op, &req); err != nil {
		return err
	}
	if req.From == "" || req.To == "" {
		return errors.Join(requiredIfEmpty(op, "from", req.From), requiredIfEmpty(op, "to", req.To))
	}
	g, ref, err := a.fileGrant(c, op, fileWrite)
	if err != nil {
		return err
	}
	if err := a.VFolders.Storage.Rename(c.UserContext(), ref, req.From, req.To); err != nil {
		return err // the port names the field (from, to)
	}
	return c.JSON(fileChanged{FolderID: g.FolderID, Path: req.To})
}

func requiredIfEmpty(op, field, v string) error {
	if v == "" {
		return domain.Invalid(op, field, "required")
	}
	return nil
}
