package commandapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
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
	id, ref, _, err := a.ownUpload(c, op)
	if err != nil {
		return err
	}
	if err := a.VFolders.Storage.AbortUpload(c.UserContext(), ref, id); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}
