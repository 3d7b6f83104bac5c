package domain

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// MaxVFolderNameLength bounds a folder name, in characters.
const MaxVFolderNameLength = 64

// VFolderSpec is what a create request asks for. Empty fields take the
// defaults: usage mode general, permission rw, owned by the caller.
type VFolderSpec struct {
	ID         uuid.UUID
	Name       string
	Host       string
	Owner      VFolderOwner
	UsageMode  VFolderUsageMode
	Permission VFolderPermission
	// Quota is the folder's size limit in bytes (0: only the quota scope's).
	Quota     int64
	Cloneable bool
}

// ValidateVFolderName checks a folder name: 1 to 64 characters, no slash,
// no NUL or control character, not "." or "..", no surrounding spaces.
func ValidateVFolderName(op, field, name string) error {
	switch {
	case name == "":
		return Invalid(op, field, "must not be empty")
	case !utf8.ValidString(name):
		return Invalid(op, field, "must be valid UTF-8")
	case utf8.RuneCountInString(name) > MaxVFolderNameLength:
		return Invalid(op, field, "must be at most %d characters", MaxVFolderNameLength)
	case name == "." || name == "..":
		return Invalid(op, field, "%q is not a folder name", name)
	case strings.TrimSpace(name) != name:
		return Invalid(op, field, "must not start or end with spaces")
	case strings.ContainsAny(name, `/\`):
		return Invalid(op, field, "must not contain a slash or backslash")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return Invalid(op, field, "must not contain control characters")
	}
	return nil
}

// withDefaults fills the spec's defaults for viewer v.
func (s VFolderSpec) withDefaults(v VFolderViewer) VFolderSpec {
	if s.UsageMode == "" {
		s.UsageMode = VFolderGeneral
	}
	if s.Permission == "" {
		s.Permission = VFolderReadWrite
	}
	if s.Owner.Kind == "" {
		s.Owner.Kind = VFolderOwnedByUser
	}
	if s.Owner.Kind == VFolderOwnedByUser && s.Owner.ID == "" {
		s.Owner.ID = v.UserID
	}
	if s.Owner.Domain == "" {
		s.Owner.Domain = v.Domain
	}
	return s
}

// validate reports the first invalid field of a spec with defaults.
func (s VFolderSpec) validate(op string) error {
	if s.ID == uuid.Nil {
		return Invalid(op, "id", "must be set")
	}
	if err := ValidateVFolderName(op, "name", s.Name); err != nil {
		return err
	}
	switch {
	case s.Host == "":
		return Invalid(op, "host", "must name a storage host")
	case s.UsageMode != VFolderGeneral && s.UsageMode != VFolderModel && s.UsageMode != VFolderData:
		return Invalid(op, "usage_mode", "%q is not one of general, model, data", s.UsageMode)
	case !s.Permission.Valid():
		return Invalid(op, "permission", "%q is not one of ro, rw, wd", s.Permission)
	case s.Owner.Kind != VFolderOwnedByUser && s.Owner.Kind != VFolderOwnedByProject:
		return Invalid(op, "ownership_type", "%q is not user or project", s.Owner.Kind)
	case s.Owner.ID == "":
		return Invalid(op, "project", "a project folder must name its project")
	case s.Quota < 0:
		return Invalid(op, "quota", "must not be negative")
	}
	return nil
}

// CreateVFolder decides the creation of a folder (spec.ID) by v, given v's
// host permissions. A user creates folders they own; a project folder, or
// a folder owned by another user, needs an admin of its domain. The owner
// index must also claim the name (VFolderIndex.Claim), in that stream.
func CreateVFolder(spec VFolderSpec, v VFolderViewer, access VFolderHosts, now time.Time) ([]Event, error) {
	const op = "vfolder.create"
	spec = spec.withDefaults(v)
	if err := spec.validate(op); err != nil {
		return nil, err
	}
	if v.ReadOnly {
		return nil, Errorf(op, KindForbidden, "the monitor role is read-only")
	}
	if !v.manages(spec.Owner) {
		return nil, Errorf(op, KindForbidden, "only an admin of domain %q may create a folder for a project or another user", spec.Owner.Domain)
	}
	if err := access.require(op, spec.Host, PermCreateVFolder); err != nil {
		return nil, err
	}
	return []Event{VFolderCreated{
		FolderID: spec.ID, Name: spec.Name, Host: spec.Host, Owner: spec.Owner, Creator: v.UserID,
		UsageMode: spec.UsageMode, Permission: spec.Permission, Quota: spec.Quota,
		Cloneable: spec.Cloneable, Status: VFolderReady, At: now,
	}}, nil
}

// Clone decides the creation of a copy of f as a new folder (spec; its
// host defaults to f's): f must be ready and cloneable (its managers may
// clone it anyway), and v must see it. The copy starts in status cloning;
// FinishClone ends it when the files are copied.
func (f *VFolder) Clone(spec VFolderSpec, v VFolderViewer, access VFolderHosts, now time.Time) ([]Event, error) {
	const op = "vfolder.clone"
	if _, err := f.visible(op, v); err != nil {
		return nil, err
	}
	if !f.cloneable && !v.manages(f.owner) {
		return nil, Errorf(op, KindForbidden, "folder %q is not cloneable", f.name)
	}
	if f.status != VFolderReady {
		return nil, Errorf(op, KindConflict, "folder %q is %s: only a ready folder can be cloned", f.name, f.status)
	}
	if spec.Host == "" {
		spec.Host = f.host
	}
	if spec.UsageMode == "" {
		spec.UsageMode = f.usageMode
	}
	evs, err := CreateVFolder(spec, v, access, now)
	if err != nil {
		return nil, err
	}
	created := evs[0].(VFolderCreated)
	created.CloneOf, created.Status = f.id, VFolderCloning
	return []Event{created}, nil
}
