package commands

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// Virtual folder commands (vfolder_*.go). A folder lives in its stream
// vfolder-<uuid> (domain.VFolder); the names of an owner's folders live in
// the owner's index stream vfolder-owner-<kind>-<id> (domain.VFolderIndex),
// which keeps them unique and counts them against max_vfolder_count. The
// bytes live on a storage host (VFolderStorage). Creation writes the
// folder's stream and its name's claim in one append (after making the
// directory); other commands that touch several of these write them one
// after the other, never in one transaction; each documents what a crash
// in between leaves and what repairs it.
//
// Owners: a user folder is owned by the user's id; a project folder by the
// project's key "<domain>/<project>" (domain.ProjectKey), which is also how
// a viewer's projects are named (domain.VFolderViewer.Projects).

// VFolderTenancy is what the vfolder commands need to know of tenancy.
// infra/vfolders implements it over the tenancy read model.
type VFolderTenancy interface {
	// VFolderAccess describes actor as folders see it: its role flags and
	// projects, and the storage hosts it may use with their permissions
	// (the union of the allowed_vfolder_hosts of its domain, its projects
	// and its main keypair's policy).
	VFolderAccess(ctx context.Context, actor Principal) (VFolderAccess, error)
	// StoragePolicy is the storage policy of a folder owner: the user's
	// user resource policy, the project's project resource policy. Zero
	// fields (or no policy) mean no limit.
	StoragePolicy(ctx context.Context, owner domain.VFolderOwner) (domain.StoragePolicySpec, error)
	// UserByEmail finds the user with an e-mail address (any case):
	// KindNotFound when there is none, or it is deleted.
	UserByEmail(ctx context.Context, email string) (VFolderUser, error)
	// UserByID finds a user: KindNotFound when there is none, or it is
	// deleted.
	UserByID(ctx context.Context, id uuid.UUID) (VFolderUser, error)
}

// VFolderAccess is a principal as the vfolder aggregate sees it.
type VFolderAccess struct {
	Viewer domain.VFolderViewer
	Hosts  domain.VFolderHosts
}

// VFolderUser is a user that folders can be shared with.
type VFolderUser struct {
	ID     uuid.UUID
	Domain string
}

// VFolderStorage is the part of the storage port (infra/vfstorage.Folders)
// the commands use. Every method is idempotent, so a command retried after
// a crash calls it again safely.
type VFolderStorage interface {
	// HasHost reports whether a storage host of that name is configured.
	HasHost(host string) bool
	CreateFolder(ctx context.Context, host string, id uuid.UUID) error
	DeleteFolder(ctx context.Context, host string, id uuid.UUID) error
	// CloneFolder copies src's files into the new folder dst; dst appears
	// only complete, so a dst that exists already is the copy of an
	// earlier run, and succeeds.
	CloneFolder(ctx context.Context, srcHost string, src uuid.UUID, dstHost string, dst uuid.UUID) error
	// UsedBytes is how many bytes a folder holds (measured, possibly
	// cached; a folder without data holds 0).
	UsedBytes(ctx context.Context, host string, id uuid.UUID) (int64, error)
}

// VFolderDirectory finds folders by name where the write side keeps no
// index: among the folders shared with a user (accepted invitations). The
// vfolders read model implements it.
type VFolderDirectory interface {
	// SharedWithNamed returns the ids of the folders shared with user that
	// are named name.
	SharedWithNamed(ctx context.Context, user, name string) ([]uuid.UUID, error)
}

// VFolderPorts are the outside parts the vfolder commands need. Without
// Tenancy and Storage every vfolder command fails with KindUnavailable,
// and sessions may not mount folders; Directory is needed to mount
// folders shared with the requester by name.
type VFolderPorts struct {
	Tenancy   VFolderTenancy
	Storage   VFolderStorage
	Directory VFolderDirectory
}

// UserFolderOwner is the owner of a user's folders.
func UserFolderOwner(user uuid.UUID, domainName string) domain.VFolderOwner {
	return domain.VFolderOwner{Kind: domain.VFolderOwnedByUser, ID: user.String(), Domain: domainName}
}

// ProjectFolderOwner is the owner of a project's folders.
func ProjectFolderOwner(domainName, project string) domain.VFolderOwner {
	return domain.VFolderOwner{Kind: domain.VFolderOwnedByProject, ID: domain.ProjectKey(domainName, project), Domain: domainName}
}

// vfolderRepos are the repositories of the vfolder aggregates.
// vfolderParts is what the vfolder commands (and RequestSession's
// mounts) share: the folder repositories, the outside ports, the ids, the
// clock, and creation's settings (the grace of an abandoned name claim,
// the default quota).
type vfolderParts struct {
	vfolders       vfolderRepos
	vf             VFolderPorts
	newID          func() uuid.UUID
	grace          time.Duration
	vfDefaultQuota int64
	clock
}

type vfolderRepos struct {
	folders repository[*domain.VFolder]
	indexes repository[*domain.VFolderIndex]
}

func newVFolderRepos(store EventStore, retry retryPolicy) vfolderRepos {
	return vfolderRepos{
		folders: repository[*domain.VFolder]{store: store, rehydrate: domain.RehydrateVFolder, retry: retry},
		indexes: repository[*domain.VFolderIndex]{store: store, rehydrate: domain.RehydrateVFolderIndex, retry: retry},
	}
}

// vfAccess checks that the ports are configured and describes actor.
func (d vfolderParts) vfAccess(ctx context.Context, op string, actor Principal) (VFolderAccess, error) {
	if d.vf.Tenancy == nil || d.vf.Storage == nil {
		return VFolderAccess{}, domain.Errorf(op, domain.KindUnavailable, "virtual folders are not configured on this server")
	}
	if actor.UserID == uuid.Nil {
		return VFolderAccess{}, domain.Errorf(op, domain.KindUnauthenticated, "no acting user")
	}
	return d.vf.Tenancy.VFolderAccess(ctx, actor)
}

// addressee is a user named by e-mail address, looked up before the
// folder is loaded; found is false when no user has the address.
type addressee struct {
	// field and ident are how the request named the user ("email" and
	// the address, or "user_id" and the id).
	field, ident string
	user         VFolderUser
	found        bool
}

// lookUpAddress looks an e-mail address up (an unknown one is no error).
func (d vfolderParts) lookUpAddress(ctx context.Context, email string) (addressee, error) {
	u, err := d.vf.Tenancy.UserByEmail(ctx, email)
	return found(addressee{field: "email", ident: email}, u, err)
}

// lookUpUserID looks a user id up (an unknown or malformed one is no
// error: it is answered on the folder, like an unknown address).
func (d vfolderParts) lookUpUserID(ctx context.Context, raw string) (addressee, error) {
	a := addressee{field: "user_id", ident: raw}
	id, err := uuid.Parse(raw)
	if err != nil {
		return a, nil
	}
	u, err := d.vf.Tenancy.UserByID(ctx, id)
	return found(a, u, err)
}

func found(a addressee, u VFolderUser, err error) (addressee, error) {
	switch {
	case err == nil:
		a.user, a.found = u, true
		return a, nil
	case domain.KindOf(err) == domain.KindNotFound:
		return a, nil
	}
	return addressee{}, err
}

// in is the addressee as a user of folder f, which v acts on. The folder
// authorizes v first (domain.VFolder.CheckManage): a caller that may not
// see it gets not found, one that may not manage it forbidden, whatever
// the address, so that only the folder's managers learn whether an
// address is known. An address of no user of f's domain is then invalid:
// a folder is shared inside its domain only, and another domain's users
// are answered like unknown addresses.
func (a addressee) in(op string, f *domain.VFolder, v domain.VFolderViewer) (VFolderUser, error) {
	if err := f.CheckManage(op, v); err != nil {
		return VFolderUser{}, err
	}
	if !a.found || a.user.Domain != f.Owner().Domain {
		if a.field == "user_id" {
			return VFolderUser{}, domain.Invalid(op, "user_id", "no user %q in the folder's domain", a.ident)
		}
		return VFolderUser{}, domain.Invalid(op, a.field, "no user with the e-mail address %q", a.ident)
	}
	return a.user, nil
}

// storageError marks a storage failure with the operation; domain errors
// of the port keep their kind.
func storageError(op string, err error) error {
	var de *domain.Error
	if errors.As(err, &de) {
		return &domain.Error{Op: op, Kind: de.Kind, Field: de.Field, Message: "storage", Err: err}
	}
	return &domain.Error{Op: op, Kind: domain.KindUnavailable, Message: "storage", Err: err}
}

// VFolderResult is what most vfolder commands return: the folder and the
// position of the last event appended (or observed).
type VFolderResult struct {
	FolderID uuid.UUID
	Position uint64
}

// updateFolder is the shape of most vfolder commands: describe the actor,
// then load the folder, decide, append (retrying on concurrent writers).
func (d vfolderParts) updateFolder(ctx context.Context, op string, md Metadata, actor Principal, id uuid.UUID,
	decide func(f *domain.VFolder, acc VFolderAccess, at time.Time) ([]domain.Event, error)) (VFolderResult, error) {
	acc, err := d.vfAccess(ctx, op, actor)
	if err != nil {
		return VFolderResult{}, err
	}
	at := d.now()
	_, pos, err := d.vfolders.folders.update(ctx, domain.VFolderStream(id), md, func(f *domain.VFolder) ([]domain.Event, error) {
		return decide(f, acc, at)
	})
	if err != nil {
		return VFolderResult{}, err
	}
	return VFolderResult{FolderID: id, Position: pos}, nil
}

// folderResult wraps a folder's position.
func folderResult(id uuid.UUID, pos uint64, err error) (VFolderResult, error) {
	if err != nil {
		return VFolderResult{}, err
	}
	return VFolderResult{FolderID: id, Position: pos}, nil
}
