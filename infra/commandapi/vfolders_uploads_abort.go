package commandapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/readapi"
)

// abortUpload handles DELETE /v1/vfolders/{id}/uploads/{upload} (tus
// termination): the upload's bytes are removed and its reservation of the
// folder's quota released; 204. It waits for a chunk being written to
// end first.
func (a *api) abortUpload(c *fiber.Ctx) error {
	const op = "vfolder.uploads.abort"
	if err := tusResumable(c, op); err != nil {
		return err
	}
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	_, ref, err := a.fileGrant(c, op, fileWrite)
	if err != nil {
		return err
	}
	id, _, err := a.ownUpload(c, op, who, ref)
	if err != nil {
		return err
	}
	if err := a.VFolders.Storage.AbortUpload(c.UserContext(), ref, id); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}
