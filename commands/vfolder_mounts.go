package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// MaxSessionMounts bounds the folders one session may name.
const MaxSessionMounts = 64

// resolveMounts turns a session request's mounts (folder names) into
// resolved mounts for the actor, and adds the actor's dot-folders (names
// starting with '.') that it did not name. Each named folder is looked up
// among the actor's own folders, then the session project's folders, then
// the folders shared with the actor; the folder then decides
// (domain.VFolder.MountBy: visible, ready, mount-in-session on its host, a
// permission no higher than the actor's). Every refusal names its mount
// ("mounts[i]"); overlapping paths are refused by domain.RequestSession.
//
// A request without mounts from an actor without dot-folders costs one
// read (the actor's index). Without the vfolder ports, or without an actor,
// nothing is mounted and naming a folder is refused.
func (d vfolderParts) resolveMounts(ctx context.Context, actor Principal, spec domain.SessionSpec, reqs []domain.VFolderMountRequest) ([]domain.VFolderMount, error) {
	const op = "session.request"
	configured := d.vf.Tenancy != nil && d.vf.Storage != nil
	switch {
	case len(reqs) > MaxSessionMounts:
		return nil, domain.Invalid(op, "mounts", "at most %d folders, not %d", MaxSessionMounts, len(reqs))
	case !configured || actor.UserID == uuid.Nil:
		if len(reqs) > 0 {
			return nil, domain.Invalid(op, "mounts", "virtual folders cannot be mounted on this server")
		}
		return nil, nil
	}
	own, err := d.vfolders.indexes.load(ctx, UserFolderOwner(actor.UserID, actor.Domain).Stream())
	if err != nil {
		return nil, err
	}
	dots := false
	for name := range own.agg.Names() {
		if strings.HasPrefix(name, ".") {
			dots = true
			break
		}
	}
	if len(reqs) == 0 && !dots {
		// The common request: nothing named, nothing to mount on its own;
		// the actor's access (a handful of reads) is not needed.
		return nil, nil
	}
	acc, err := d.vf.Tenancy.VFolderAccess(ctx, actor)
	if err != nil {
		return nil, err
	}
	var project map[string]uuid.UUID
	if len(reqs) > 0 && spec.Project != "" {
		p, err := d.vfolders.indexes.load(ctx, ProjectFolderOwner(spec.Domain, spec.Project).Stream())
		if err != nil {
			return nil, err
		}
		project = p.agg.Names()
	}

	var (
		mounts []domain.VFolderMount
		named  = map[uuid.UUID]bool{}
		errs   []error
	)
	for i, req := range reqs {
		field := fmt.Sprintf("mounts[%d]", i)
		m, err := d.resolveMount(ctx, op, field, acc, own.agg, project, req)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		named[uuid.MustParse(m.FolderID)] = true
		mounts = append(mounts, m)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for name, id := range own.agg.Names() {
		if !strings.HasPrefix(name, ".") || named[id] {
			continue
		}
		l, err := d.vfolders.folders.load(ctx, domain.VFolderStream(id))
		if err != nil {
			return nil, err
		}
		if !l.agg.IsDotFolder() {
			continue // renamed since the index was read
		}
		// A dot-folder that cannot be mounted now (in the trash, no
		// mount-in-session on its host) is left out, not an error.
		if m, err := l.agg.MountBy(acc.Viewer, acc.Hosts, domain.VFolderMountRequest{Name: name}, "mounts"); err == nil {
			mounts = append(mounts, m)
			named[id] = true
		}
	}
	return mounts, nil
}

// resolveMount finds and decides one named mount.
func (d vfolderParts) resolveMount(ctx context.Context, op, field string, acc VFolderAccess, own *domain.VFolderIndex,
	project map[string]uuid.UUID, req domain.VFolderMountRequest) (domain.VFolderMount, error) {
	if req.Name == "" {
		return domain.VFolderMount{}, domain.Invalid(op, field+".name", "required")
	}
	id, ok := own.Lookup(req.Name)
	if !ok {
		id, ok = project[req.Name]
	}
	if !ok && d.vf.Directory != nil {
		ids, err := d.vf.Directory.SharedWithNamed(ctx, acc.Viewer.UserID, req.Name)
		if err != nil {
			return domain.VFolderMount{}, err
		}
		switch len(ids) {
		case 0:
		case 1:
			id, ok = ids[0], true
		default:
			return domain.VFolderMount{}, domain.Invalid(op, field+".name", "%d folders named %q are shared with you; rename one to tell them apart", len(ids), req.Name)
		}
	}
	if !ok {
		return domain.VFolderMount{}, domain.Invalid(op, field+".name", "no virtual folder named %q", req.Name)
	}
	l, err := d.vfolders.folders.load(ctx, domain.VFolderStream(id))
	if err != nil {
		return domain.VFolderMount{}, err
	}
	m, err := l.agg.MountBy(acc.Viewer, acc.Hosts, req, field)
	return m, namedField(err, field)
}

// namedField gives a field-less domain error the field it is about.
func namedField(err error, field string) error {
	var de *domain.Error
	if errors.As(err, &de) && de.Field == "" {
		e := *de
		e.Field = field
		return &e
	}
	return err
}
