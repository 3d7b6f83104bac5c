package commandapi

import (
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

// headUpload handles HEAD /v1/vfolders/{id}/uploads/{upload}: 200 with
// Upload-Offset (the bytes durably stored: a client resumes there),
// Upload-Length, Upload-Metadata as given at creation, Upload-Expires.
// It waits for a chunk still being written to the upload (a connection
// just cut) to end. An unknown, finished, aborted or expired upload, or
// another user's, is 404.
func (a *api) headUpload(c *fiber.Ctx) error {
	const op = "vfolder.uploads.head"
	if err := tusResumable(c, op); err != nil {
		return err
	}
	_, _, st, err := a.ownUpload(c, op)
	if err != nil {
		return err
	}
	setUploadState(c, st)
	return c.SendStatus(http.StatusOK)
}

// setUploadState puts everything HEAD tells about an upload in the answer.
func setUploadState(c *fiber.Ctx, st vfstorage.UploadState) {
	setUploadHeaders(c, st)
	c.Set(hUploadLength, strconv.FormatInt(st.Length, 10))
	if st.Metadata != "" {
		c.Set(hUploadMetadata, st.Metadata)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
}
