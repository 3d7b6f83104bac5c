package readapi

import (
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

const opQuotaScope = "vfolder.quota-scope"

// quotaScopeView is the answer of GET /v1/vfolders/quota-scope: the usage
// of every folder of one owner (a user, or a project) measured on the
// storage hosts, against its policy's limits (0: none).
type quotaScopeView struct {
	OwnershipType     domain.VFolderOwnerKind `json:"ownership_type"`
	Owner             string                  `json:"owner"`
	Bytes             int64                   `json:"bytes"`
	Files             int64                   `json:"files"`
	Folders           int                     `json:"folders"`
	MaxQuotaScopeSize int64                   `json:"max_quota_scope_size"`
	MaxVFolderCount   int                     `json:"max_vfolder_count"`
}

// vfolderQuotaScope handles GET /v1/vfolders/quota-scope?project=: the
// caller's own scope, or a project's (its members and admins).
func (a *api) vfolderQuotaScope(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	if err := a.WaitForPosition(c, opQuotaScope); err != nil {
		return err
	}
	v, err := a.viewer(c, who)
	if err != nil {
		return err
	}
	owner := domain.VFolderOwner{Kind: domain.VFolderOwnedByUser, ID: who.ID.String(), Domain: v.Domain}
	if p := c.Query("project"); p != "" {
		owner = domain.VFolderOwner{Kind: domain.VFolderOwnedByProject, ID: domain.ProjectKey(v.Domain, p), Domain: v.Domain}
		member := false
		for _, key := range v.Projects {
			member = member || key == owner.ID
		}
		if !member && !v.Superadmin && !v.DomainAdmin && !v.ReadOnly {
			return domain.Errorf(opQuotaScope, domain.KindNotFound, "project %q not found", p)
		}
	}
	policy, err := a.VFolders.Tenancy.StoragePolicy(c.UserContext(), owner)
	if err != nil {
		return err
	}
	folders, err := a.VFolders.Folders.StoredBy(c.UserContext(), owner)
	if err != nil {
		return err
	}
	out := quotaScopeView{OwnershipType: owner.Kind, Owner: owner.ID, Folders: len(folders),
		MaxQuotaScopeSize: policy.MaxQuotaScopeSize, MaxVFolderCount: policy.MaxVFolderCount}
	for _, f := range folders {
		if f.Status == domain.VFolderCloning {
			continue
		}
		u, err := a.usage(c, f.Host, f.ID)
		if err != nil {
			return err
		}
		out.Bytes += u.Bytes
		out.Files += u.Files
	}
	return c.JSON(out)
}

// usage measures a folder; one without data holds nothing.
func (a *api) usage(c *fiber.Ctx, host string, id uuid.UUID) (vfstorage.Usage, error) {
	u, err := a.VFolders.Storage.Usage(c.UserContext(), vfstorage.Ref{Host: host, ID: id})
	if errors.Is(err, vfstorage.ErrNoFolder) {
		return vfstorage.Usage{}, nil
	}
	return u, err
}
