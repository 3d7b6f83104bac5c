package commandapi

import (
	"context"
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/vfstorage"
	"github.com/cairnhq/cairn/projections/vfolders"
)

// Virtual folder commands and file routes (/v1/vfolders..., vfolders_*.go,
// one route per file). Commands authorize on the folder's stream. File
// operations are not events: each asks commands.AuthorizeVFolderFiles
// first, then calls the storage port, so they live here, reads of files
// included. The folder queries are readapi's.

// VFolderDeps are what the virtual folder routes need; without Folders,
// Tenancy and Storage the routes are not mounted.
type VFolderDeps struct {
	Folders *vfolders.ReadModel
	Tenancy commands.VFolderTenancy
	Storage vfstorage.Storage
	// DefaultHost is the storage host of a folder whose create request
	// names none (default: the first configured host).
	DefaultHost string
	// MaxUploadSize returns the bound of one uploaded file in bytes (0:
	// only quotas), asked at every upload: the server reads the run-time
	// setting vfolder.max_upload_size (readapi.SettingsDeps.Int), so a
	// change applies to the next upload without a restart. Nil: only
	// quotas.
	MaxUploadSize func(context.Context) (int64, error)
}

// maxUploadSize is the upload bound in force now (0: only quotas).
func (d VFolderDeps) maxUploadSize(ctx context.Context) (int64, error) {
	if d.MaxUploadSize == nil {
		return 0, nil
	}
	return d.MaxUploadSize(ctx)
}

func (d VFolderDeps) configured() bool {
	return d.Folders != nil && d.Tenancy != nil && d.Storage != nil
}

// mountVFolders registers the virtual folder commands and file routes.
func (a *api) mountVFolders(v1 fiber.Router) {
	if !a.VFolders.configured() {
		return
	}
	v1.Post("/vfolders", a.createVFolder)
	v1.Post("/vfolders/:id/rename", a.renameVFolder)
	v1.Delete("/vfolders/:id", a.trashVFolder)
	v1.Post("/vfolders/:id/restore", a.restoreVFolder)
	v1.Post("/vfolders/:id/delete-forever", a.deleteVFolderForever)
	v1.Post("/vfolders/:id/purge", a.purgeVFolder)
	v1.Post("/vfolders/:id/clone", a.cloneVFolder)
	v1.Post("/vfolders/:id/invitations", a.inviteToVFolder)
	v1.Post("/vfolders/:id/leave", a.leaveVFolder)
	v1.Post("/vfolders/:id/share", a.shareVFolder)
	v1.Post("/vfolders/:id/unshare", a.unshareVFolder)
	v1.Post("/vfolder-invitations/:id/accept", a.acceptVFolderInvitation)
	v1.Post("/vfolder-invitations/:id/reject", a.rejectVFolderInvitation)
	v1.Post("/vfolder-invitations/:id/cancel", a.cancelVFolderInvitation)
	v1.Get("/vfolders/:id/files", a.listVFolderFiles)
	v1.Delete("/vfolders/:id/files", a.deleteVFolderFile)
	v1.Post("/vfolders/:id/files/mkdir", a.mkdirVFolder)
	v1.Post("/vfolders/:id/files/move", a.moveVFolderFile)
	v1.Put("/vfolders/:id/files/content", a.uploadVFolderFile)
	v1.Get("/vfolders/:id/files/content", a.downloadVFolderFile)
	v1.Options("/vfolders/:id/uploads", a.optionsUploads)
	v1.Post("/vfolders/:id/uploads", a.createUpload)
	v1.Head("/vfolders/:id/uploads/:upload", a.headUpload)
	v1.Patch("/vfolders/:id/uploads/:upload", a.appendUpload)
	v1.Delete("/vfolders/:id/uploads/:upload", a.abortUpload)
}

// decodeBody decodes a JSON body strictly, naming the route's op.
func decodeBody(c *fiber.Ctx, op string, v any) error {
	if err := httpapi.DecodeJSON(c.Body(), v); err != nil {
		var de *domain.Error
		if errors.As(err, &de) {
			e := *de
			e.Op = op
			return &e
		}
		return err
	}
	return nil
}

// folderWritten is the answer of most folder commands.
type folderWritten struct {
	ID       uuid.UUID `json:"id"`
	Position uint64    `json:"position"`
}

func folderWrittenAnswer(c *fiber.Ctx, status int, res commands.VFolderResult, err error) error {
	if err != nil {
		return err
	}
	return c.Status(status).JSON(folderWritten{ID: res.FolderID, Position: res.Position})
}
