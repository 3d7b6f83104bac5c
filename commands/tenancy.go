package commands

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// Tenancy commands: domains, projects and their members, users, keypairs,
// resource policies, resource groups and images. Every one of them
// carries the Principal acting, and authorizes it before anything is
// written. The decision table (superadmins act everywhere,
// domain admins inside their domain, users, monitors and auditors do not
// administrate):
//
//	command                              superadmin  admin of D           user / monitor
//	CreateDomain                         yes         no (403)             no (403)
//	ModifyDomain D                       yes         no (403 own, 404)    no (403 own, 404)
//	Create/ModifyProject in D            yes         yes                  no (403 own, 404)
//	Add/RemoveProjectMember in D         yes         yes                  no (403 own, 404)
//	CreateUser in D                      yes         yes (2)              no (403 own, 404)
//	ModifyUser of D                      yes         yes (1)              no (403 own, 404)
//	IssueKeypair, ModifyKeypair,
//	  SetKeypairActive, SetMainKeypair   yes         yes (1)              no (403 own, 404)
//	RotateKeypairSecret                  yes         yes (1)              own keypair only (role user)
//	Create/Modify*Policy                 yes         no (403)             no (403)
//	Create/ModifyResourceGroup,
//	  Grant/RevokeResourceGroupAccess    yes         no (403)             no (403)
//	Register/Modify/ForgetImage          yes         no (403)             no (403)
//
//	(1) not on a superadmin or an auditor (403), and never making anyone
//	    superadmin or auditor (403).
//	(2) not a superadmin nor an auditor (403); a domain auditor is fine.
//
// "403 own, 404" means: on an object of the caller's own domain the answer
// is KindForbidden; on another domain's it is exactly the KindNotFound an
// object that does not exist gets, so that a caller learns nothing of
// other tenants. Policies, resource groups and images are global objects:
// only superadmins change them, everyone else gets KindForbidden. Domain
// admins may still assign any existing policy inside their domain: the
// domain's total_resource_slots, which only superadmins set, caps what the
// domain as a whole may use.

// Principal is who acts: the authenticated user, its role and its domain.
type Principal struct {
	UserID uuid.UUID
	Role   domain.Role
	Domain string
}

func (p Principal) isSuperadmin() bool { return p.Role == domain.RoleSuperadmin }

// administers reports whether p may administer objects of domain d.
func (p Principal) administers(d string) bool {
	return p.isSuperadmin() || (p.Role == domain.RoleAdmin && p.Domain == d)
}

// authorizeIn authorizes p on an object (named what) of domain d: nil
// when p administers d, KindForbidden inside p's own domain, and the
// not-found error of the object elsewhere.
func authorizeIn(op, what string, p Principal, d string) error {
	switch {
	case p.administers(d):
		return nil
	case p.Domain == d:
		return domain.Errorf(op, domain.KindForbidden, "the %s role cannot do this", roleName(p.Role))
	}
	return domain.NotFound(op, what)
}

// authorizeGlobal lets only superadmins change global objects (policies,
// resource groups, images).
func authorizeGlobal(op string, p Principal) error {
	if p.isSuperadmin() {
		return nil
	}
	return domain.Errorf(op, domain.KindForbidden, "only superadmins can do this")
}

// authorizeOnUser authorizes p on a user (and the user's keypairs): as
// authorizeIn on the user's domain, and domain admins may not act on
// superadmins. A user that does not exist is not found.
func authorizeOnUser(op string, p Principal, u *domain.User) error {
	if !u.Exists() {
		return domain.NotFound(op, "user")
	}
	if err := authorizeIn(op, "user", p, u.Domain()); err != nil {
		return err
	}
	if reservedToSuperadmins(u.Role()) && !p.isSuperadmin() {
		return domain.Errorf(op, domain.KindForbidden, "only superadmins can act on a %s", u.Role())
	}
	return nil
}

// reservedToSuperadmins reports whether only superadmins may grant role
// and act on its holders (their profile, keypairs, tokens): superadmins,
// and auditors, who read every domain's audit trail, so that a domain
// admin who could act on one could read it as them.
func reservedToSuperadmins(role domain.Role) bool {
	return role == domain.RoleSuperadmin || role == domain.RoleAuditor
}

// forbidReservedGrant refuses to let a non-superadmin make a superadmin
// or an auditor (a domain admin may make domain auditors of its domain).
func forbidReservedGrant(op string, p Principal, role domain.Role) error {
	if reservedToSuperadmins(role) && !p.isSuperadmin() {
		return domain.Errorf(op, domain.KindForbidden, "only superadmins can make %ss", role)
	}
	return nil
}

func roleName(r domain.Role) string {
	if r == "" {
		return "(no)"
	}
	return string(r)
}

// PasswordHasher turns a plaintext password into the string stored on
// the user (argon2id or bcrypt, with its parameters and salt). It is
// given to NewHandlers in Options.
type PasswordHasher interface {
	Hash(password string) (string, error)
}

// Password limits, checked before hashing.
const (
	MinPasswordLength = 8
	MaxPasswordLength = 256
)

func checkPassword(op, field, password string) error {
	if len(password) < MinPasswordLength || len(password) > MaxPasswordLength {
		return domain.Invalid(op, field, "must be %d to %d bytes long", MinPasswordLength, MaxPasswordLength)
	}
	return nil
}

// passwords hashes the passwords of user commands.
type passwords struct{ hasher PasswordHasher }

// hash checks and hashes a password with the configured hasher.
func (d passwords) hash(op, field, password string) (string, error) {
	if err := checkPassword(op, field, password); err != nil {
		return "", err
	}
	if d.hasher == nil {
		return "", domain.Errorf(op, domain.KindInternal, "no password hasher configured (commands.Options.PasswordHasher)")
	}
	h, err := d.hasher.Hash(password)
	if err != nil {
		return "", &domain.Error{Op: op, Kind: domain.KindInternal, Message: "hashing the password", Err: err}
	}
	return h, nil
}

// newAccessKey returns a fresh access key the way Backend.AI makes them:
// "AKIA" and 16 base32 characters of 10 random bytes (20 characters).
func newAccessKey() (string, error) {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "AKIA" + base32.StdEncoding.EncodeToString(b[:]), nil
}

// newSecretKey returns a fresh secret key: 30 random bytes, URL-safe
// base64 (40 characters).
func newSecretKey() (string, error) {
	var b [30]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

func keyError(op string, err error) error {
	return &domain.Error{Op: op, Kind: domain.KindUnavailable, Message: "generating keys", Err: err}
}

// requirePolicy checks that a named policy exists (an empty name needs
// none); a missing one is KindInvalid naming the field.
func requirePolicy[A interface {
	aggregate
	Exists() bool
}](ctx context.Context, r repository[A], op, field string, stream domain.Stream, name string) error {
	if name == "" {
		return nil
	}
	if err := domain.CheckName(op, field, name); err != nil {
		return err
	}
	l, err := r.load(ctx, stream)
	if err != nil {
		return err
	}
	if !l.agg.Exists() {
		return domain.Invalid(op, field, "no such policy %q", name)
	}
	return nil
}

// result wraps a position.
func result(pos uint64, err error) (Result, error) {
	if err != nil {
		return Result{}, err
	}
	return Result{Position: pos}, nil
}

// keypairLookup loads keypairs with their owners.
type keypairLookup struct {
	keypairs repository[*domain.Keypair]
	users    repository[*domain.User]
}

// keypairOf loads a keypair and its owner and authorizes the actor on
// them (as on the owner, see authorizeOnUser). With ownerMay, the owner
// itself (role user) is authorized too.
func (d keypairLookup) keypairOf(ctx context.Context, op string, actor Principal, accessKey string, ownerMay bool) (loaded[*domain.Keypair], *domain.User, error) {
	var none loaded[*domain.Keypair]
	if !domain.IsAccessKey(accessKey) {
		return none, nil, domain.NotFound(op, "keypair")
	}
	k, err := d.keypairs.load(ctx, domain.KeypairStream(accessKey))
	if err != nil {
		return none, nil, err
	}
	if !k.agg.Exists() {
		return none, nil, domain.NotFound(op, "keypair")
	}
	owner, err := d.users.load(ctx, domain.UserStream(k.agg.UserID()))
	if err != nil {
		return none, nil, err
	}
	if ownerMay && actor.UserID == k.agg.UserID() && actor.Role == domain.RoleUser {
		return k, owner.agg, nil
	}
	if err := authorizeIn(op, "keypair", actor, k.agg.Domain()); err != nil {
		return none, nil, err
	}
	if reservedToSuperadmins(owner.agg.Role()) && !actor.isSuperadmin() {
		return none, nil, domain.Errorf(op, domain.KindForbidden, "only superadmins can act on a %s's keypairs", owner.agg.Role())
	}
	return k, owner.agg, nil
}
