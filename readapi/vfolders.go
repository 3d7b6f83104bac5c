package readapi

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/vfstorage"
	"github.com/cairnhq/cairn/projections/vfolders"
)

// Virtual folders (/v1/vfolders..., vfolders_*.go, one route per file).
// Writes run the vfolder commands, which authorize on the folder's stream;
// reads use the vfolders read model, whose Visible query decides what a
// caller sees (a folder it may not see answers 404 exactly like one that
// does not exist, and so does a malformed id). File operations are not
// events: each asks commands.AuthorizeVFolderFiles first, then calls the
// storage port.

// VFolderDeps are what the virtual folder routes need; without Folders,
// Tenancy and Storage the routes are not mounted.
type VFolderDeps struct {
	Folders *vfolders.ReadModel
	Tenancy commands.VFolderTenancy
	Storage vfstorage.Storage
	// DefaultHost is the storage host of a folder whose create request
	// names none (default: the first configured host).
	DefaultHost string
	// MaxUploadSize bounds one uploaded file in bytes (0: only quotas).
	MaxUploadSize int64
}

func (d VFolderDeps) configured() bool {
	return d.Folders != nil && d.Tenancy != nil && d.Storage != nil
}

// mountVFolders registers the virtual folder routes.
func (a *api) mountVFolders(v1 fiber.Router) {
	if !a.VFolders.configured() {
		return
	}
	// Static paths first: /v1/vfolders/{id} would take them.
	v1.Get("/vfolders/quota-scope", a.vfolderQuotaScope)
	v1.Post("/vfolders", a.createVFolder)
	v1.Get("/vfolders", a.listVFolders)
	v1.Get("/vfolders/:id", a.getVFolder)
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
	v1.Get("/vfolder-invitations", a.listVFolderInvitations)
	v1.Post("/vfolder-invitations/:id/accept", a.acceptVFolderInvitation)
	v1.Post("/vfolder-invitations/:id/reject", a.rejectVFolderInvitation)
	v1.Post("/vfolder-invitations/:id/cancel", a.cancelVFolderInvitation)
	v1.Get("/vfolders/:id/files", a.listVFolderFiles)
	v1.Delete("/vfolders/:id/files", a.deleteVFolderFile)
	v1.Post("/vfolders/:id/files/mkdir", a.mkdirVFolder)
	v1.Post("/vfolders/:id/files/move", a.moveVFolderFile)
	v1.Put("/vfolders/:id/files/content", a.uploadVFolderFile)
	v1.Get("/vfolders/:id/files/content", a.downloadVFolderFile)
}

// StreamsBody reports whether a request is a file upload, whose body the
// handler streams to storage (httpapi.Config.StreamRequestBody): no other
// route reads a body beyond the server's body limit.
func StreamsBody(c *fiber.Ctx) bool {
	return c.Method() == http.MethodPut && strings.HasPrefix(c.Path(), "/v1/vfolders/") && strings.HasSuffix(c.Path(), "/files/content")
}

// folderID parses the {id} of a folder route; a malformed id is not found.
func folderID(c *fiber.Ctx, op string) (uuid.UUID, error) {
	raw := c.Params("id")
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.Nil, domain.Errorf(op, domain.KindNotFound, "virtual folder %q not found", raw)
	}
	return id, nil
}

// viewer describes the caller for the read model's visibility rules.
func (a *api) viewer(c *fiber.Ctx, who caller) (domain.VFolderViewer, error) {
	acc, err := a.VFolders.Tenancy.VFolderAccess(c.UserContext(), who.actor())
	return acc.Viewer, err
}

// visibleFolder is the folder with the caller's relation and permission,
// or the not-found error of a folder the caller may not see.
func (a *api) visibleFolder(c *fiber.Ctx, who caller, op string, id uuid.UUID) (vfolders.Visible, error) {
	v, err := a.viewer(c, who)
	if err != nil {
		return vfolders.Visible{}, err
	}
	all := []vfolders.Relation{vfolders.RelationOwn, vfolders.RelationShared, vfolders.RelationProject, vfolders.RelationDomain}
	rows, err := a.VFolders.Folders.Visible(c.UserContext(), v, vfolders.Filter{Relations: all, ID: id})
	if err != nil {
		return vfolders.Visible{}, err
	}
	if len(rows) == 0 {
		return vfolders.Visible{}, domain.Errorf(op, domain.KindNotFound, "virtual folder %s not found", id)
	}
	return rows[0], nil
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

// vfolderView is a folder on the wire.
type vfolderView struct {
	ID            uuid.UUID                `json:"id"`
	Name          string                   `json:"name"`
	Host          string                   `json:"host"`
	OwnershipType domain.VFolderOwnerKind  `json:"ownership_type"`
	Owner         string                   `json:"owner"`
	Domain        string                   `json:"domain"`
	Creator       string                   `json:"creator"`
	UsageMode     domain.VFolderUsageMode  `json:"usage_mode"`
	Permission    domain.VFolderPermission `json:"permission"`
	Quota         int64                    `json:"quota"`
	Cloneable     bool                     `json:"cloneable"`
	CloneOf       *uuid.UUID               `json:"clone_of"`
	Status        domain.VFolderStatus     `json:"status"`
	StatusMessage string                   `json:"status_message,omitempty"`
	Relation      vfolders.Relation        `json:"relation"`
	Effective     domain.VFolderPermission `json:"effective_permission"`
	CreatedAt     time.Time                `json:"created_at"`
	ModifiedAt    time.Time                `json:"modified_at"`
	Position      uint64                   `json:"position"`
}

func viewVFolder(v vfolders.Visible) vfolderView {
	out := vfolderView{
		ID: v.ID, Name: v.Name, Host: v.Host, OwnershipType: v.Owner.Kind, Owner: v.Owner.ID, Domain: v.Owner.Domain,
		Creator: v.Creator, UsageMode: v.UsageMode, Permission: v.Permission, Quota: v.Quota, Cloneable: v.Cloneable,
		Status: v.Status, StatusMessage: v.StatusMessage, Relation: v.Relation, Effective: v.Effective,
		CreatedAt: v.CreatedAt, ModifiedAt: v.ModifiedAt, Position: v.Position,
	}
	if v.CloneOf != uuid.Nil {
		id := v.CloneOf
		out.CloneOf = &id
	}
	return out
}
