package commandapi

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

// appendUpload handles PATCH /v1/vfolders/{id}/uploads/{upload}: the body
// (Content-Type application/offset+octet-stream, else 415) is appended at
// Upload-Offset, which must be the stored offset (409 otherwise, nothing
// read). With Upload-Checksum ("sha1 <base64>" or "sha256 <base64>") the
// chunk is kept only whole and matching: a mismatch answers 460 and the
// offset does not move. Without one, a chunk cut midway (a dropped
// connection) keeps the bytes that came, so that the client resumes after
// them. More bytes than the upload's length: 413, the chunk discarded. 204
// with the new Upload-Offset; the chunk that completes the upload puts the
// file at its path (409 if the path was taken meanwhile and overwrite was
// not asked for; the upload is then gone).
func (a *api) appendUpload(c *fiber.Ctx) error {
	const op = "vfolder.uploads.append"
	if err := tusResumable(c, op); err != nil {
		return err
	}
	if ct, _, _ := strings.Cut(c.Get(fiber.HeaderContentType), ";"); strings.TrimSpace(ct) != tusChunkType {
		c.Context().SetConnectionClose()
		return fiber.NewError(http.StatusUnsupportedMediaType, fmt.Sprintf("%s: a chunk's Content-Type is %s", op, tusChunkType))
	}
	offset, err := parseCount(op, hUploadOffset, c.Get(hUploadOffset))
	if err != nil {
		c.Context().SetConnectionClose()
		return err
	}
	sum, err := parseChecksum(op, c.Get(hUploadChecksum))
	if err != nil {
		c.Context().SetConnectionClose()
		return err
	}
	id, ref, st, err := a.ownUpload(c, op)
	if err != nil {
		c.Context().SetConnectionClose()
		return err
	}
	st, err = a.appendChunk(c, op, ref, id, offset, st, sum)
	if err != nil {
		return err
	}
	setUploadHeaders(c, st)
	return c.SendStatus(http.StatusNoContent)
}

// appendChunk streams the request's body into the upload at offset (st
// is the upload as found before). A body announced past the upload's
// length is refused unread (413).
func (a *api) appendChunk(c *fiber.Ctx, op string, ref vfstorage.Ref, id string, offset int64, st vfstorage.UploadState, sum *vfstorage.Checksum) (vfstorage.UploadState, error) {
	if n := c.Request().Header.ContentLength(); n > 0 && offset == st.Offset && offset+int64(n) > st.Length {
		c.Context().SetConnectionClose()
		return vfstorage.UploadState{}, domain.Errorf(op, domain.KindTooLarge,
			"the chunk of %d bytes at offset %d passes the upload's length of %d", n, offset, st.Length)
	}
	body := httpapi.BodyStream(c)
	if body == nil {
		body = bytes.NewReader(c.Body())
	}
	st, err := a.VFolders.Storage.AppendUpload(c.UserContext(), ref, id, offset, body, sum)
	if err != nil {
		// What was not read of a refused body is not: close rather than
		// drain.
		if _, drained := body.(*bytes.Reader); !drained {
			c.Context().SetConnectionClose()
		}
		if errors.Is(err, vfstorage.ErrChecksum) {
			return vfstorage.UploadState{}, fiber.NewError(httpapi.StatusChecksumMismatch, err.Error())
		}
		return vfstorage.UploadState{}, err
	}
	return st, nil
}
