package commandapi

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

// uploadResponse is the answer of PUT /v1/vfolders/{id}/files/content.
type uploadResponse struct {
	fileChanged
	File fileView `json:"file"`
}

// uploadVFolderFile handles PUT /v1/vfolders/{id}/files/content?path=
// &overwrite=: the body is the file's bytes, streamed to the storage host
// (never held whole in memory: the server streams this route's body, see
// StreamsBody; it is read through httpapi.BodyStream, so that a strict
// signature's body hash is checked before the file is committed). The file appears complete or not at all; over
// VFolderDeps.MaxUploadSize (read at every upload) the answer is 413, over the folder's quota or
// its owner's quota scope 403 (kind quota-exceeded), and nothing is left
// behind. overwrite=false refuses to replace an existing file (409).
// Uploads into the folders of one limited quota scope run one at a time
// in this server; several server replicas sharing a storage host still
// need a quota backend that enforces the scope (e.g. XFS project quotas).
func (a *api) uploadVFolderFile(c *fiber.Ctx) error {
	const op = "vfolder.files.upload"
	path := strings.Clone(c.Query("path"))
	if path == "" {
		return domain.Invalid(op, "path", "required")
	}
	maxSize, err := a.VFolders.maxUploadSize(c.UserContext())
	if err != nil {
		return err
	}
	opts := vfstorage.UploadOptions{MaxSize: maxSize}
	switch c.Query("overwrite") {
	case "", "true":
	case "false":
		opts.NoReplace = true
	default:
		return domain.Invalid(op, "overwrite", "must be true or false")
	}
	if n := c.Request().Header.ContentLength(); opts.MaxSize > 0 && int64(n) > opts.MaxSize {
		c.Context().SetConnectionClose()
		return domain.Errorf(op, domain.KindTooLarge, "the file is %d bytes; at most %d may be uploaded", n, opts.MaxSize)
	}
	g, ref, err := a.fileGrant(c, op, fileWrite)
	if err != nil {
		return err
	}
	if g.Scope != "" {
		// One upload at a time in a limited quota scope, authorized
		// again once it holds the scope: the room is then what the
		// scope's other folders leave after every earlier upload.
		unlock := a.scopes.lock(g.Scope)
		defer unlock()
		if g, ref, err = a.fileGrant(c, op, fileWrite); err != nil {
			return err
		}
	}
	opts.Quota = g.Quota
	// Read under the body idle timeout (a slow upload may take any time,
	// a stalled one is cut: 408) and the strict signature's body check.
	body := httpapi.BodyStream(c)
	if body == nil {
		body = bytes.NewReader(c.Body())
	}
	fi, err := a.VFolders.Storage.Upload(c.UserContext(), ref, path, body, opts)
	if err != nil {
		// The rest of a refused body is not read: close the connection
		// rather than drain it.
		if _, drained := body.(*bytes.Reader); !drained {
			c.Context().SetConnectionClose()
		}
		return pathError(err, "path")
	}
	return c.Status(http.StatusCreated).JSON(uploadResponse{fileChanged: fileChanged{FolderID: g.FolderID, Path: path}, File: viewFile(fi)})
}
