package vfolders

import (
	"context"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/tenancy"
)

// Tenancy implements commands.VFolderTenancy over the tenancy read model,
// and readapi.VFolderTenancy (VFolderViewer, StoragePolicy) for the folder
// queries.
//
// A principal that is not a user of the read model (the bootstrap token
// of `cairn dev` before it has a tenancy user) is described from the
// principal alone: its role and domain, no projects, and its domain's
// hosts. Superadmins may use every configured host with every permission
// (Hosts), whatever the policies say: they act everywhere.
type Tenancy struct {
	RM *tenancy.ReadModel
	// Hosts are the configured storage hosts' names.
	Hosts []string
}

var _ commands.VFolderTenancy = Tenancy{}

// VFolderViewer describes a user as the folders' read model sees it: the
// Viewer of VFolderAccess.
func (t Tenancy) VFolderViewer(ctx context.Context, user uuid.UUID, role domain.Role, domainName string) (domain.VFolderViewer, error) {
	acc, err := t.VFolderAccess(ctx, commands.Principal{UserID: user, Role: role, Domain: domainName})
	return acc.Viewer, err
}

// VFolderAccess implements commands.VFolderTenancy.
func (t Tenancy) VFolderAccess(ctx context.Context, actor commands.Principal) (commands.VFolderAccess, error) {
	role, domainName := actor.Role, actor.Domain
	var projects []string
	hosts := domain.VFolderHosts{}
	user, err := t.RM.GetUser(ctx, actor.UserID)
	switch {
	case err == nil:
		role, domainName = user.Role, user.Domain
		members, err := t.RM.ProjectsOf(ctx, actor.UserID)
		if err != nil {
			return commands.VFolderAccess{}, err
		}
		for _, m := range members {
			projects = append(projects, domain.ProjectKey(m.Domain, m.Project))
			p, err := t.RM.GetProject(ctx, m.Domain, m.Project)
			if err != nil && domain.KindOf(err) != domain.KindNotFound {
				return commands.VFolderAccess{}, err
			}
			hosts = hosts.Union(p.AllowedVFolderHosts)
		}
		if h, err := t.keypairHosts(ctx, user.MainAccessKey); err != nil {
			return commands.VFolderAccess{}, err
		} else {
			hosts = hosts.Union(h)
		}
	case domain.KindOf(err) != domain.KindNotFound:
		return commands.VFolderAccess{}, err
	}
	d, err := t.RM.GetDomain(ctx, domainName)
	if err != nil && domain.KindOf(err) != domain.KindNotFound {
		return commands.VFolderAccess{}, err
	}
	hosts = hosts.Union(d.AllowedVFolderHosts)
	if role == domain.RoleSuperadmin {
		for _, h := range t.Hosts {
			hosts = hosts.Union(domain.VFolderHosts{h: domain.VFolderHostPermissions()})
		}
	}
	return commands.VFolderAccess{
		Viewer: domain.VFolderViewer{
			UserID: actor.UserID.String(), Domain: domainName, Projects: projects,
			Superadmin: role == domain.RoleSuperadmin, DomainAdmin: role == domain.RoleAdmin, ReadOnly: role == domain.RoleMonitor,
		},
		Hosts: hosts,
	}, nil
}

// keypairHosts are the hosts of a keypair's policy.
func (t Tenancy) keypairHosts(ctx context.Context, accessKey string) (domain.VFolderHosts, error) {
	if accessKey == "" {
		return nil, nil
	}
	k, err := t.RM.GetKeypair(ctx, accessKey)
	if domain.KindOf(err) == domain.KindNotFound || (err == nil && k.ResourcePolicy == "") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := t.RM.GetKeypairPolicy(ctx, k.ResourcePolicy)
	if domain.KindOf(err) == domain.KindNotFound {
		return nil, nil
	}
	return p.AllowedVFolderHosts, err
}

// StoragePolicy implements commands.VFolderTenancy: a project that does
// not exist is KindNotFound; a user that does not, or an owner without a
// policy, has no limits.
func (t Tenancy) StoragePolicy(ctx context.Context, owner domain.VFolderOwner) (domain.StoragePolicySpec, error) {
	var (
		name string
		get  func(context.Context, string) (tenancy.StoragePolicy, error)
	)
	switch owner.Kind {
	case domain.VFolderOwnedByUser:
		id, err := uuid.Parse(owner.ID)
		if err != nil {
			return domain.StoragePolicySpec{}, nil
		}
		u, err := t.RM.GetUser(ctx, id)
		if domain.KindOf(err) == domain.KindNotFound {
			return domain.StoragePolicySpec{}, nil
		}
		if err != nil {
			return domain.StoragePolicySpec{}, err
		}
		name, get = u.ResourcePolicy, t.RM.GetUserPolicy
	case domain.VFolderOwnedByProject:
		dn, pn, ok := domain.SplitProjectKey(owner.ID)
		if !ok {
			return domain.StoragePolicySpec{}, domain.NotFound("vfolder.storage-policy", "project")
		}
		p, err := t.RM.GetProject(ctx, dn, pn)
		if err != nil {
			return domain.StoragePolicySpec{}, err
		}
		name, get = p.ResourcePolicy, t.RM.GetProjectPolicy
	default:
		return domain.StoragePolicySpec{}, domain.Invalid("vfolder.storage-policy", "owner", "unknown owner kind %q", owner.Kind)
	}
	if name == "" {
		return domain.StoragePolicySpec{}, nil
	}
	p, err := get(ctx, name)
	if domain.KindOf(err) == domain.KindNotFound {
		return domain.StoragePolicySpec{}, nil
	}
	return p.StoragePolicySpec, err
}

// UserByEmail implements commands.VFolderTenancy.
func (t Tenancy) UserByEmail(ctx context.Context, email string) (commands.VFolderUser, error) {
	u, err := t.RM.UserByEmail(ctx, email)
	if err != nil {
		return commands.VFolderUser{}, err
	}
	if u.Status == domain.UserDeleted {
		return commands.VFolderUser{}, domain.NotFound("vfolder.invite", "user")
	}
	return commands.VFolderUser{ID: u.ID, Domain: u.Domain}, nil
}

// UserByID implements commands.VFolderTenancy.
func (t Tenancy) UserByID(ctx context.Context, id uuid.UUID) (commands.VFolderUser, error) {
	u, err := t.RM.GetUser(ctx, id)
	if err != nil {
		return commands.VFolderUser{}, err
	}
	if u.Status == domain.UserDeleted {
		return commands.VFolderUser{}, domain.NotFound("vfolder.share", "user")
	}
	return commands.VFolderUser{ID: u.ID, Domain: u.Domain}, nil
}
