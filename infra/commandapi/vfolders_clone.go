package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
)

// cloneVFolder handles POST /v1/vfolders/{id}/clone with the new folder's
// settings (as for POST /v1/vfolders; the host, usage mode default to the
// source's): 202 with the new folder's id. It starts in status cloning
// and becomes ready (or error) once its files are copied.
func (a *api) cloneVFolder(c *fiber.Ctx) error {
	const op = "vfolder.clone"
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	id, err := readapi.FolderID(c, op)
	if err != nil {
		return err
	}
	var req createVFolderRequest
	if err := decodeBody(c, op, &req); err != nil {
		return err
	}
	res, err := a.Commands.CloneVFolder.Handle(c.UserContext(), metadata(c, who),
		commands.CloneVFolder{Actor: actor(who), SourceID: id, Spec: req.spec(who, "")})
	if err == nil {
		c.Location("/v1/vfolders/" + res.FolderID.String())
	}
	return folderWrittenAnswer(c, http.StatusAccepted, res, err)
}
