package domain

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Tenancy: domains, projects, users and
// their keypairs, the resource policies that limit them, resource groups
// and the image registry. Each object is an aggregate with a stream of its
// own, named by its natural key where it has one (a domain's name, a
// keypair's access key, ...), so that creating an object with the
// expected revision "no stream" is what makes its key unique.

// Role is what a user may do.
type Role string

const (
	// RoleSuperadmin may do everything everywhere.
	RoleSuperadmin Role = "superadmin"
	// RoleAdmin administers one domain: everything inside it.
	RoleAdmin Role = "admin"
	// RoleUser acts on its own sessions and folders only.
	RoleUser Role = "user"
	// RoleMonitor reads, never writes.
	RoleMonitor Role = "monitor"
	// RoleAuditor reads the audit trail of every domain and, otherwise,
	// only its own things, as a user does; it writes nothing. Only a
	// superadmin grants it.
	RoleAuditor Role = "auditor"
	// RoleDomainAuditor reads the audit records of its own domain and,
	// otherwise, only its own things; it writes nothing. A superadmin or
	// the domain's admin grants it.
	RoleDomainAuditor Role = "domain-auditor"
)

// Valid reports whether r is one of the six roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSuperadmin, RoleAdmin, RoleUser, RoleMonitor, RoleAuditor, RoleDomainAuditor:
		return true
	}
	return false
}

// ReadOnly reports whether the role never writes: monitors and both
// auditors.
func (r Role) ReadOnly() bool {
	return r == RoleMonitor || r == RoleAuditor || r == RoleDomainAuditor
}

// Auditor reports whether the role is one of the two auditors.
func (r Role) Auditor() bool { return r == RoleAuditor || r == RoleDomainAuditor }

// UserStatus says whether a user may log in.
type UserStatus string

const (
	UserActive             UserStatus = "active"
	UserInactive           UserStatus = "inactive"
	UserDeleted            UserStatus = "deleted"
	UserBeforeVerification UserStatus = "before-verification"
)

// Valid reports whether s is one of the four statuses.
func (s UserStatus) Valid() bool {
	switch s {
	case UserActive, UserInactive, UserDeleted, UserBeforeVerification:
		return true
	}
	return false
}

// VFolderHostPermission is one thing a user may do with the folders of a
// storage host.
type VFolderHostPermission string

// The storage host permissions of resource policies, in their
// canonical order.
const (
	PermCreateVFolder        VFolderHostPermission = "create-vfolder"
	PermModifyVFolder        VFolderHostPermission = "modify-vfolder"
	PermDeleteVFolder        VFolderHostPermission = "delete-vfolder"
	PermMountInSession       VFolderHostPermission = "mount-in-session"
	PermUploadFile           VFolderHostPermission = "upload-file"
	PermDownloadFile         VFolderHostPermission = "download-file"
	PermInviteOthers         VFolderHostPermission = "invite-others"
	PermSetUserSpecificPerms VFolderHostPermission = "set-user-specific-permission"
)

// VFolderPermissions lists every storage host permission in canonical
// order.
func VFolderHostPermissions() []VFolderHostPermission {
	return []VFolderHostPermission{PermCreateVFolder, PermModifyVFolder, PermDeleteVFolder, PermMountInSession,
		PermUploadFile, PermDownloadFile, PermInviteOthers, PermSetUserSpecificPerms}
}

// VFolderHosts maps a storage host to the permissions granted on it
// (allowed_vfolder_hosts). Normalised sets are sorted in canonical order
// without duplicates.
type VFolderHosts map[string][]VFolderHostPermission

// Clone returns a deep copy (nil stays nil).
func (h VFolderHosts) Clone() VFolderHosts {
	if h == nil {
		return nil
	}
	out := make(VFolderHosts, len(h))
	for host, perms := range h {
		out[host] = append([]VFolderHostPermission{}, perms...)
	}
	return out
}

// Equal reports whether h and o grant the same permissions on the same
// hosts (both normalised).
func (h VFolderHosts) Equal(o VFolderHosts) bool {
	if len(h) != len(o) {
		return false
	}
	for host, perms := range h {
		other, ok := o[host]
		if !ok || !slices.Equal(perms, other) {
			return false
		}
	}
	return true
}

// Union returns the hosts of h and o with, per host, the union of their
// permissions: a user's allowed hosts are the union of their domain's,
// projects' and keypair policy's.
func (h VFolderHosts) Union(o VFolderHosts) VFolderHosts {
	out := h.Clone()
	if out == nil {
		out = VFolderHosts{}
	}
	for host, perms := range o {
		out[host] = append(out[host], perms...)
	}
	for host, perms := range out {
		out[host] = canonicalPerms(perms)
	}
	return out
}

func canonicalPerms(perms []VFolderHostPermission) []VFolderHostPermission {
	out := []VFolderHostPermission{}
	for _, p := range VFolderHostPermissions() {
		if slices.Contains(perms, p) {
			out = append(out, p)
		}
	}
	return out
}

// Input limits of the tenancy objects.
const (
	maxDescriptionLength = 1024
	maxHostLength        = 128
	// MaxRateLimit bounds a keypair's requests per rate-limit window.
	MaxRateLimit = 1 << 30
	// maxTimeoutSeconds bounds every timeout and lifetime: ten years.
	maxTimeoutSeconds = 10 * 365 * 24 * 3600
)

// problems collects every input problem of one decision, so that all are
// reported at once: a single *Error or several joined (errors.Is(err,
// ErrInvalid) holds either way).
type problems struct {
	op   string
	errs []error
}

func (p *problems) bad(field, format string, args ...any) {
	p.errs = append(p.errs, Invalid(p.op, field, format, args...))
}

func (p *problems) err() error {
	switch len(p.errs) {
	case 0:
		return nil
	case 1:
		return p.errs[0]
	}
	return errors.Join(p.errs...)
}

// checkDescription: at most 1024 bytes of valid UTF-8 without NUL.
func (p *problems) checkDescription(field, s string) {
	switch {
	case len(s) > maxDescriptionLength:
		p.bad(field, "longer than %d bytes", maxDescriptionLength)
	case !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0:
		p.bad(field, "must be valid UTF-8 without NUL")
	}
}

// checkToken: a required word without spaces or control characters, at
// most max bytes (storage hosts, access keys in grants, ...).
func (p *problems) checkToken(field, s string, max int) {
	switch {
	case s == "":
		p.bad(field, "required")
	case len(s) > max:
		p.bad(field, "longer than %d bytes", max)
	case !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		p.bad(field, "must not contain spaces or control characters")
	}
}

// CheckName validates the name of an object (a domain, a project, a
// policy, a resource group) given in the input field: 1 to 64 letters,
// digits, '.', '_' and '-', starting with a letter or a digit.
func CheckName(op, field, name string) error {
	p := &problems{op: op}
	p.checkName(field, name)
	return p.err()
}

// checkName: an object name (see checkName in session_request.go).
func (p *problems) checkName(field, name string) { checkNameField(field, name, p.bad) }

// checkOptionalName: empty, or a valid name.
func (p *problems) checkOptionalName(field, name string) {
	if name != "" {
		p.checkName(field, name)
	}
}

// checkSeconds: 0 (never) up to ten years.
func (p *problems) checkSeconds(field string, v int64) {
	if v < 0 || v > maxTimeoutSeconds {
		p.bad(field, "must be between 0 and %d seconds, not %d", maxTimeoutSeconds, v)
	}
}

// slotLimits validates the slot amounts of a limit (a total, a maximum,
// a minimum) and returns a copy. Zero amounts are kept: a limit of zero is
// not the same as no limit. Names must be known, amounts non-negative,
// byte slots whole bytes, device and MIG slots whole devices.
func (p *problems) slotLimits(field string, slots Slots) Slots {
	out := make(Slots, len(slots))
	for _, name := range slots.Names() {
		v := slots[name]
		f := field + "." + string(name)
		t, known := SlotTypeOf(name)
		switch {
		case !known:
			p.bad(f, "unknown resource slot")
			continue
		case v < 0:
			p.bad(f, "must not be negative")
			continue
		case t == SlotBytes && !v.IsWhole():
			p.bad(f, "must be a whole number of bytes")
		case t == SlotUnique && !v.IsWhole():
			p.bad(f, "must be a whole number of devices")
		case IsAccelerator(name) && name != SlotCUDAShares && !v.IsWhole():
			p.bad(f, "must be a whole number of devices")
		case name == SlotCUDAShares && int64(v)%(QuantityScale/100) != 0:
			p.bad(f, "must be a multiple of 0.01, not %s", v)
		}
		out[name] = v
	}
	return out
}

// sameLimits compares two limits: unlike amounts, a slot a limit does not
// name differs from a slot limited to zero.
func sameLimits(a, b Slots) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// vfolderHosts validates and normalises allowed_vfolder_hosts: host names
// without spaces, known permissions, each set sorted without duplicates.
func (p *problems) vfolderHosts(field string, hosts VFolderHosts) VFolderHosts {
	out := make(VFolderHosts, len(hosts))
	for host, perms := range hosts {
		p.checkToken(field, host, maxHostLength)
		for _, perm := range perms {
			if !slices.Contains(VFolderHostPermissions(), perm) {
				p.bad(field+"."+host, "unknown permission %q", perm)
			}
		}
		out[host] = canonicalPerms(perms)
	}
	return out
}

// checkAt refuses a zero time: decisions take their time as an argument.
func (p *problems) checkAt(at time.Time) {
	if at.IsZero() {
		p.bad("at", "must be set")
	}
}

// aggregateState is what fold needs of an aggregate: how to apply one
// event, and where to record the revision reached.
type aggregateState interface {
	apply(Event) error
	setRevision(int64)
}

// fold applies events, in revision order from 0, to a fresh aggregate. A
// stream that cannot be the aggregate's is a KindInternal error naming the
// revision.
func fold(op string, events []RecordedEvent, a aggregateState) error {
	events, err := foldable(op, events)
	if err != nil {
		return err
	}
	for _, re := range events {
		if err := a.apply(re.Event); err != nil {
			return &Error{Op: op, Kind: KindInternal, Message: fmt.Sprintf("revision %d (%s)", re.Revision, re.Event.EventType()), Err: err}
		}
		a.setRevision(re.Revision)
	}
	return nil
}

// stateOf is the part every tenancy aggregate shares: whether it exists
// and the revision reached.
type stateOf struct {
	exists   bool
	revision int64
}

// Exists reports whether the object has been created.
func (s *stateOf) Exists() bool { return s.exists }

// Revision is the revision of the last event folded in, -1 for a stream
// without events: the expected revision of the next append.
func (s *stateOf) Revision() int64 { return s.revision }

func (s *stateOf) setRevision(r int64) { s.revision = r }

// eventBeforeCreation and friends are the fold errors of a stream that
// cannot be an aggregate's.
func eventBeforeCreation(what string) error { return fmt.Errorf("event before %s was created", what) }

func createdTwice(what string) error { return fmt.Errorf("%s created twice", what) }

func foreignEvent(ev Event, what string) error {
	return fmt.Errorf("event type %q does not belong to a %s stream", ev.EventType(), what)
}

// NotFound returns the error of an object that does not exist; the write
// side answers it too for an object of a tenant the caller may not see, so
// that both look exactly the same (no existence leak): the message names
// the kind of object only, the caller knows which one it asked for.
func NotFound(op, what string) error {
	return Errorf(op, KindNotFound, "%s not found", what)
}

// alreadyExists is the conflict of creating an object whose key is taken.
func alreadyExists(op, what string) error {
	return Errorf(op, KindConflict, "%s already exists", what)
}
