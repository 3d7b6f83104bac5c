package readapi

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
	"github.com/cairnhq/cairn/projections/vfolders"
)

// Virtual folder queries (/v1/vfolders..., vfolders_*.go, one route per
// file). They use the vfolders read model, whose Visible query decides
// what a caller sees (a folder it may not see answers 404 exactly like one
// that does not exist, and so does a malformed id). The folder commands
// and the file operations (authorized by the commands, then carried out
// on the storage) are in infra/commandapi.

// VFolderDeps are what the virtual folder queries need; without Folders,
// Tenancy and Storage the routes are not mounted.
type VFolderDeps struct {
	Folders *vfolders.ReadModel
	Tenancy VFolderTenancy
	// Storage measures the folders' usage.
	Storage vfstorage.Storage
}

// VFolderTenancy is what the folder queries read of the tenancy
// (infra/vfolders.Tenancy provides it).
type VFolderTenancy interface {
	// VFolderViewer describes a caller as the folders' read model sees it:
	// its role flags and projects.
	VFolderViewer(ctx context.Context, user uuid.UUID, role domain.Role, domainName string) (domain.VFolderViewer, error)
	// StoragePolicy is the storage policy of a folder owner (zero fields,
	// or no policy, mean no limit).
	StoragePolicy(ctx context.Context, owner domain.VFolderOwner) (domain.StoragePolicySpec, error)
}

func (d VFolderDeps) configured() bool {
	return d.Folders != nil && d.Tenancy != nil && d.Storage != nil
}

// mountVFolders registers the virtual folder queries.
func (a *api) mountVFolders(v1 fiber.Router) {
	if !a.VFolders.configured() {
		return
	}
	// Static paths first: /v1/vfolders/{id} would take them.
	v1.Get("/vfolders/quota-scope", a.vfolderQuotaScope)
	v1.Get("/vfolders", a.listVFolders)
	v1.Get("/vfolders/:id", a.recheck(a.getVFolder))
	v1.Get("/vfolder-invitations", a.listVFolderInvitations)
}

// FolderID parses the {id} of a folder route; a malformed id is not found.
func FolderID(c *fiber.Ctx, op string) (uuid.UUID, error) {
	raw := c.Params("id")
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.Nil, domain.Errorf(op, domain.KindNotFound, "virtual folder %q not found", raw)
	}
	return id, nil
}

// viewer describes the caller for the read model's visibility rules.
func (a *api) viewer(c *fiber.Ctx, who caller) (domain.VFolderViewer, error) {
	return a.VFolders.Tenancy.VFolderViewer(c.UserContext(), who.ID, domain.Role(who.Role), who.Domain)
}

// VisibleFolder is the folder with the caller's relation and permission,
// or the not-found error of a folder the caller may not see.
func (a *API) VisibleFolder(c *fiber.Ctx, who Caller, op string, id uuid.UUID) (vfolders.Visible, error) {
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

// VFolderView is a folder on the wire.
type VFolderView struct {
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

// ViewVFolder maps a visible folder to its wire shape.
func ViewVFolder(v vfolders.Visible) VFolderView {
	out := VFolderView{
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
