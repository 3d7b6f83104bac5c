package domain

import "slices"

// Allows reports whether access grants perm on host.
func (a VFolderHosts) Allows(host string, perm VFolderHostPermission) bool {
	return slices.Contains(a[host], perm)
}

// require is the KindForbidden error of a missing host permission.
func (a VFolderHosts) require(op, host string, perm VFolderHostPermission) error {
	if a.Allows(host, perm) {
		return nil
	}
	return Errorf(op, KindForbidden, "the %s permission on storage host %q is not granted (allowed_vfolder_hosts)", perm, host)
}

// VFolderViewer is who looks at or acts on a folder, as tenancy knows them.
type VFolderViewer struct {
	UserID string
	Domain string
	// Superadmin acts everywhere; DomainAdmin everywhere inside Domain.
	Superadmin  bool
	DomainAdmin bool
	// ReadOnly is the monitor role: it sees its domain's folders, read-only.
	ReadOnly bool
	// Projects are the projects the user belongs to.
	Projects []string
}

// manages reports whether v administers folders of owner: superadmins,
// the domain's admins, and the owner of a user folder.
func (v VFolderViewer) manages(o VFolderOwner) bool {
	if v.ReadOnly {
		return false
	}
	if v.Superadmin || (v.DomainAdmin && v.Domain == o.Domain) {
		return true
	}
	return o.Kind == VFolderOwnedByUser && o.ID == v.UserID
}

// EffectivePermission is what v may do with f's files, and false when v
// may not see f at all (which callers answer as not found):
//   - superadmins and the domain's admins: wd;
//   - the owner of a user folder: wd;
//   - a member of a shared user folder: the accepted invitation's permission;
//   - a member of the owning project: their override, else the folder's
//     permission;
//   - a monitor of the domain: ro.
func (f *VFolder) EffectivePermission(v VFolderViewer) (VFolderPermission, bool) {
	if !f.Exists() {
		return "", false
	}
	if v.manages(f.owner) {
		return VFolderRWDelete, true
	}
	var perm VFolderPermission
	switch f.owner.Kind {
	case VFolderOwnedByUser:
		perm = f.members[v.UserID]
	case VFolderOwnedByProject:
		if slices.Contains(v.Projects, f.owner.ID) {
			perm = f.permission
			if o, ok := f.overrides[v.UserID]; ok {
				perm = o
			}
		}
	}
	if v.ReadOnly {
		if perm.Valid() || v.Superadmin || v.Domain == f.owner.Domain {
			return VFolderReadOnly, true
		}
		return "", false
	}
	return perm, perm.Valid()
}

// visible returns the not-found error when v may not see f.
func (f *VFolder) visible(op string, v VFolderViewer) (VFolderPermission, error) {
	perm, ok := f.EffectivePermission(v)
	if !ok {
		return "", Errorf(op, KindNotFound, "no such virtual folder")
	}
	return perm, nil
}

// CheckManage returns not-found when v cannot see f, forbidden when v
// sees it but does not administer it (a monitor never does). The decisions
// that change a folder's settings start with it; a command that must
// refuse other input first (an e-mail address it could not resolve) calls
// it before, so that only those who may act learn anything of that input.
func (f *VFolder) CheckManage(op string, v VFolderViewer) error {
	if _, err := f.visible(op, v); err != nil {
		return err
	}
	if !v.manages(f.owner) {
		return Errorf(op, KindForbidden, "only the folder's owner or an admin may do this")
	}
	return nil
}

// CheckFileAccess says whether v may read (write false) or write files of
// f, with the host permission that goes with it (download-file for reads,
// upload-file for writes); deleting files also needs the wd permission.
func (f *VFolder) CheckFileAccess(v VFolderViewer, access VFolderHosts, write, remove bool) error {
	const op = "vfolder.files"
	perm, err := f.visible(op, v)
	if err != nil {
		return err
	}
	if f.status != VFolderReady {
		return Errorf(op, KindConflict, "the folder is %s: its files can be used only when it is ready", f.status)
	}
	switch {
	case remove && !perm.CanDeleteFiles():
		return Errorf(op, KindForbidden, "deleting files needs the wd permission; you have %s", perm)
	case write && !perm.CanWrite():
		return Errorf(op, KindForbidden, "writing files needs the rw permission; you have %s", perm)
	case write || remove:
		return access.require(op, f.host, PermUploadFile)
	}
	return access.require(op, f.host, PermDownloadFile)
}
