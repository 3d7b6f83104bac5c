package commandapi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
	"github.com/cairnhq/cairn/readapi"
)

// createUpload handles POST /v1/vfolders/{id}/uploads (tus creation):
// Upload-Length is the file's size (Upload-Defer-Length is not offered),
// Upload-Metadata carries "path" (the target in the folder, e.g.
// "dir/sub/file" for a folder upload: missing parents are made at
// completion) and optionally "overwrite" ("true" replaces a file at the
// path; otherwise an existing file is 409, at creation and again at
// completion); other keys (a file name...) are kept and reported by
// HEAD. The length counts against the folder's quota from now on: over
// the server's upload limit 413, over the quota (or what the owner's
// quota scope leaves) 403 kind quota-exceeded, both before any byte is
// written. A body (Content-Type application/offset+octet-stream) is the
// first chunk (creation-with-upload). 201 with Location (the upload's URL,
// for HEAD, PATCH and DELETE), Upload-Offset, Upload-Expires, and the
// upload as JSON.
func (a *api) createUpload(c *fiber.Ctx) error {
	const op = "vfolder.uploads.create"
	if err := tusResumable(c, op); err != nil {
		return err
	}
	// Refusals leave a body unread: the connection is closed, not drained.
	withBody := c.Request().Header.ContentLength() != 0
	spec, err := a.uploadSpec(c, op)
	if err != nil {
		if withBody {
			c.Context().SetConnectionClose()
		}
		return err
	}
	if withBody {
		if ct, _, _ := strings.Cut(c.Get(fiber.HeaderContentType), ";"); strings.TrimSpace(ct) != tusChunkType {
			c.Context().SetConnectionClose()
			return fiber.NewError(http.StatusUnsupportedMediaType, op+": a chunk's Content-Type is "+tusChunkType)
		}
	}
	sum, err := parseChecksum(op, c.Get(hUploadChecksum))
	if err != nil {
		c.Context().SetConnectionClose()
		return err
	}
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	spec.Owner = who.ID.String()
	g, ref, st, err := a.reserveUpload(c, op, spec)
	if err != nil {
		if withBody {
			c.Context().SetConnectionClose()
		}
		return err
	}
	c.Location(uploadURL(g.FolderID, st.ID))
	if withBody && !st.Done {
		after, err := a.appendChunk(c, op, ref, st.ID, 0, st, sum)
		switch {
		case err == nil:
			st = after
		case errors.Is(err, vfstorage.ErrNotFound) || errors.Is(err, vfstorage.ErrExists) || errors.Is(err, vfstorage.ErrIsDir) || errors.Is(err, vfstorage.ErrNotDir):
			return err // completion refused: the upload is gone
		default:
			// The first chunk is refused: so is the upload, which no
			// client would know to continue.
			_ = a.VFolders.Storage.AbortUpload(c.UserContext(), ref, st.ID)
			c.Response().Header.Del(fiber.HeaderLocation)
			return err
		}
	}
	setUploadHeaders(c, st)
	return c.Status(http.StatusCreated).JSON(viewUpload(g.FolderID, st))
}

// uploadSpec reads the creation headers.
func (a *api) uploadSpec(c *fiber.Ctx, op string) (vfstorage.UploadSpec, error) {
	if c.Get(hUploadDeferLength) != "" {
		return vfstorage.UploadSpec{}, domain.Invalid(op, hUploadDeferLength, "is not supported: send Upload-Length")
	}
	if c.Get(hUploadLength) == "" {
		return vfstorage.UploadSpec{}, domain.Invalid(op, hUploadLength, "required")
	}
	length, err := parseCount(op, hUploadLength, c.Get(hUploadLength))
	if err != nil {
		return vfstorage.UploadSpec{}, err
	}
	raw := strings.Clone(c.Get(hUploadMetadata))
	meta, err := parseMetadata(op, raw)
	if err != nil {
		return vfstorage.UploadSpec{}, err
	}
	path := meta["path"]
	if path == "" {
		return vfstorage.UploadSpec{}, domain.Invalid(op, hUploadMetadata, "path: required (the file's path in the folder)")
	}
	if _, err := vfstorage.CleanPath(op, "path", path); err != nil {
		return vfstorage.UploadSpec{}, err
	}
	maxSize, err := a.VFolders.maxUploadSize(c.UserContext())
	if err != nil {
		return vfstorage.UploadSpec{}, err
	}
	opts := vfstorage.UploadOptions{MaxSize: maxSize, NoReplace: true}
	switch meta["overwrite"] {
	case "", "false":
	case "true":
		opts.NoReplace = false
	default:
		return vfstorage.UploadSpec{}, domain.Invalid(op, hUploadMetadata, "overwrite: must be true or false")
	}
	return vfstorage.UploadSpec{Path: path, Length: length, Metadata: raw, Options: opts}, nil
}

// reserveUpload authorizes the upload and creates it: in a limited quota
// scope one creation at a time, authorized again once it holds the scope,
// so that the room is what the scope's other folders and their uploads
// leave (an upload's length is in its folder's usage from creation).
func (a *api) reserveUpload(c *fiber.Ctx, op string, spec vfstorage.UploadSpec) (commands.VFolderFilesGrant, vfstorage.Ref, vfstorage.UploadState, error) {
	g, ref, err := a.fileGrant(c, op, fileWrite)
	if err != nil {
		return commands.VFolderFilesGrant{}, vfstorage.Ref{}, vfstorage.UploadState{}, err
	}
	if spec.Options.MaxSize > 0 && spec.Length > spec.Options.MaxSize {
		return commands.VFolderFilesGrant{}, vfstorage.Ref{}, vfstorage.UploadState{}, domain.Errorf(op, domain.KindTooLarge,
			"the file is %d bytes; at most %d may be uploaded", spec.Length, spec.Options.MaxSize)
	}
	if g.Scope != "" {
		unlock := a.scopes.lock(g.Scope)
		defer unlock()
		if g, ref, err = a.fileGrant(c, op, fileWrite); err != nil {
			return commands.VFolderFilesGrant{}, vfstorage.Ref{}, vfstorage.UploadState{}, err
		}
	}
	spec.Options.Quota = g.Quota
	st, err := a.VFolders.Storage.CreateUpload(c.UserContext(), ref, spec)
	return g, ref, st, err
}
