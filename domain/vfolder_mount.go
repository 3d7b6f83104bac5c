package domain

import (
	"path"
	"strings"
)

// VFolderMountRoot is where folders are mounted in a session's containers.
const VFolderMountRoot = "/home/work"

// VFolderMountRequest is one folder a session asks to mount: by name, at
// a path (default /home/work/<name>; relative paths are under /home/work),
// with a permission (default: the viewer's effective one).
type VFolderMountRequest struct {
	Name       string            `json:"name"`
	Path       string            `json:"path,omitempty"`
	Permission VFolderPermission `json:"permission,omitempty"`
}

// VFolderMount is a resolved mount: which folder, where in the container,
// with which permission. The agent bind-mounts the folder's directory.
type VFolderMount struct {
	FolderID   string            `json:"folder_id"`
	Name       string            `json:"name"`
	Host       string            `json:"host"`
	Path       string            `json:"path"`
	Permission VFolderPermission `json:"permission"`
}

// MountPath resolves a mount's path in the container: the default, or a
// clean absolute path under /home/work (never /home/work itself, never
// escaping it).
func MountPath(op, field, name, requested string) (string, error) {
	if requested == "" {
		return path.Join(VFolderMountRoot, name), nil
	}
	if strings.ContainsRune(requested, 0) {
		return "", Invalid(op, field, "must not contain NUL")
	}
	for _, seg := range strings.Split(requested, "/") {
		if seg == ".." {
			return "", Invalid(op, field, "%q must not contain ..", requested)
		}
	}
	p := requested
	if !path.IsAbs(p) {
		p = path.Join(VFolderMountRoot, p)
	}
	p = path.Clean(p)
	if !strings.HasPrefix(p, VFolderMountRoot+"/") {
		return "", Invalid(op, field, "%q must be under %s", requested, VFolderMountRoot)
	}
	return p, nil
}

// MountBy decides how v mounts f: v must see f, f must be ready, the host
// must grant mount-in-session, and the permission may lower v's effective
// one but never raise it (empty: the effective one).
func (f *VFolder) MountBy(v VFolderViewer, access VFolderHosts, req VFolderMountRequest, field string) (VFolderMount, error) {
	const op = "session.request"
	perm, ok := f.EffectivePermission(v)
	if !ok {
		// Exactly the answer of a name that names no folder.
		return VFolderMount{}, Invalid(op, field+".name", "no virtual folder named %q", req.Name)
	}
	if f.status != VFolderReady {
		return VFolderMount{}, &Error{Op: op, Kind: KindConflict, Field: field, Message: "folder " + f.name + " is " + string(f.status) + ": only a ready folder can be mounted"}
	}
	if err := access.require(op, f.host, PermMountInSession); err != nil {
		return VFolderMount{}, err
	}
	want := req.Permission
	switch {
	case want == "":
		want = perm
	case !want.Valid():
		return VFolderMount{}, Invalid(op, field+".permission", "%q is not one of ro, rw, wd", want)
	case !perm.Covers(want):
		return VFolderMount{}, &Error{Op: op, Kind: KindForbidden, Field: field + ".permission",
			Message: "a mount may lower but never raise the permission: you have " + string(perm) + " on " + f.name}
	}
	p, err := MountPath(op, field+".path", f.name, req.Path)
	if err != nil {
		return VFolderMount{}, err
	}
	return VFolderMount{FolderID: f.id.String(), Name: f.name, Host: f.host, Path: p, Permission: want}, nil
}

// CheckMountPaths rejects two mounts at the same path or one inside the
// other.
func CheckMountPaths(op string, mounts []VFolderMount) error {
	for i, a := range mounts {
		for _, b := range mounts[:i] {
			if a.Path == b.Path || strings.HasPrefix(a.Path, b.Path+"/") || strings.HasPrefix(b.Path, a.Path+"/") {
				return Invalid(op, "mounts", "the mounts of %s at %s and of %s at %s overlap", b.Name, b.Path, a.Name, a.Path)
			}
		}
	}
	return nil
}
