package domain

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

const (
	// MaxEmailLength keeps user-email-<address> within the event store's
	// stream name limit (RFC 5321 allows 254; longer addresses are rare).
	MaxEmailLength        = 240
	maxPasswordHashLength = 1024
)

// UserSpec is what a user is created with. The id is the caller's (a
// fresh UUID); the password is already hashed.
type UserSpec struct {
	ID       uuid.UUID
	Email    string
	Username string // defaults to the e-mail address
	FullName string
	Domain   string
	Role     Role       // defaults to user
	Status   UserStatus // defaults to active; never deleted
	// PasswordHash is what the password hasher made of the password.
	PasswordHash string
	// ResourcePolicy names the user resource policy; empty for none.
	ResourcePolicy string
}

// UserChanges are the fields a modification sets; nil leaves a field as
// it is.
type UserChanges struct {
	Username       *string
	FullName       *string
	Role           *Role
	Status         *UserStatus
	ResourcePolicy *string
	PasswordHash   *string
}

// User is the user aggregate (stream user-<uuid>). Users belong to one
// domain for good; the projects they belong to are recorded in the
// projects' streams. A user stream may also be closed before creation
// (user.creation-abandoned, see EmailReservation). The zero User does not
// exist.
type User struct {
	stateOf
	abandoned    bool
	id           uuid.UUID
	email        string
	username     string
	fullName     string
	domainName   string
	role         Role
	status       UserStatus
	passwordHash string
	policy       string
	mainKey      string
	createdAt    time.Time
	modifiedAt   time.Time
}

func (u *User) ID() uuid.UUID          { return u.id }
func (u *User) Email() string          { return u.email }
func (u *User) Username() string       { return u.username }
func (u *User) FullName() string       { return u.fullName }
func (u *User) Domain() string         { return u.domainName }
func (u *User) Role() Role             { return u.role }
func (u *User) Status() UserStatus     { return u.status }
func (u *User) PasswordHash() string   { return u.passwordHash }
func (u *User) ResourcePolicy() string { return u.policy }
func (u *User) MainAccessKey() string  { return u.mainKey }
func (u *User) CreatedAt() time.Time   { return u.createdAt }
func (u *User) ModifiedAt() time.Time  { return u.modifiedAt }

// Abandoned reports whether the stream was closed before the user was
// created: no user can ever be created under this id.
func (u *User) Abandoned() bool { return u.abandoned }

// RehydrateUser folds a user stream's events, in revision order from 0.
func RehydrateUser(events []RecordedEvent) (*User, error) {
	u := &User{stateOf: stateOf{revision: -1}}
	if err := fold("user.rehydrate", events, u); err != nil {
		return nil, err
	}
	return u, nil
}

func (u *User) apply(ev Event) error {
	if u.abandoned {
		return foreignEvent(ev, "abandoned user")
	}
	if e, ok := ev.(UserCreationAbandoned); ok {
		if u.exists {
			return foreignEvent(ev, "created user")
		}
		u.abandoned, u.id, u.email = true, e.UserID, e.Email
		return nil
	}
	if _, first := ev.(UserCreated); first == u.exists {
		if first {
			return createdTwice("user")
		}
		return eventBeforeCreation("user")
	}
	switch e := ev.(type) {
	case UserCreated:
		u.exists = true
		u.id, u.email, u.username, u.fullName = e.UserID, e.Email, e.Username, e.FullName
		u.domainName, u.role, u.status = e.Domain, e.Role, e.Status
		u.passwordHash, u.policy = e.PasswordHash, e.ResourcePolicy
		u.createdAt, u.modifiedAt = e.At, e.At
	case UserModified:
		u.username, u.fullName, u.role, u.status, u.policy = e.Username, e.FullName, e.Role, e.Status, e.ResourcePolicy
		u.modifiedAt = e.At
	case UserPasswordChanged:
		u.passwordHash, u.modifiedAt = e.PasswordHash, e.At
	case UserMainKeypairSet:
		u.mainKey, u.modifiedAt = e.AccessKey, e.At
	default:
		return foreignEvent(ev, "user")
	}
	return nil
}

// EmailKey is the form of an e-mail address that must be unique: trimmed
// and lower-cased (the reservation stream is named after it).
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// checkEmail: one '@' between a non-empty local part and a domain with a
// dot or "localhost", no spaces or control characters, at most
// MaxEmailLength bytes.
func (p *problems) checkEmail(field, email string) {
	p.checkToken(field, email, MaxEmailLength)
	if email == "" {
		return
	}
	local, host, ok := strings.Cut(email, "@")
	if !ok || local == "" || host == "" || strings.Contains(host, "@") ||
		(!strings.Contains(host, ".") && host != "localhost") || strings.HasPrefix(host, ".") || strings.HasSuffix(host, ".") {
		p.bad(field, "not an e-mail address")
	}
}

// CheckEmail validates an e-mail address given in the input field.
func CheckEmail(op, field, email string) error {
	p := &problems{op: op}
	p.checkEmail(field, email)
	return p.err()
}

func (p *problems) checkUsername(field, s string) { p.checkToken(field, s, MaxEmailLength) }

func (p *problems) checkPasswordHash(field, s string) { p.checkToken(field, s, maxPasswordHashLength) }

// Create records a new user. Every problem of the spec is reported at
// once. The domain, the policy and the uniqueness of the e-mail address
// are the caller's to check (other streams); a user stream that already
// holds a user, or that was abandoned, is KindConflict.
func (u *User) Create(spec UserSpec, at time.Time) ([]Event, error) {
	const op = "user.create"
	p := &problems{op: op}
	if spec.ID == uuid.Nil {
		p.bad("id", "must be set")
	}
	p.checkEmail("email", spec.Email)
	if spec.Username == "" {
		spec.Username = spec.Email
	}
	p.checkUsername("username", spec.Username)
	p.checkDescription("full_name", spec.FullName)
	p.checkName("domain", spec.Domain)
	if spec.Role == "" {
		spec.Role = RoleUser
	}
	if !spec.Role.Valid() {
		p.bad("role", "unknown role %q (superadmin, admin, user, monitor, auditor, domain-auditor)", spec.Role)
	}
	if spec.Status == "" {
		spec.Status = UserActive
	}
	if !spec.Status.Valid() || spec.Status == UserDeleted {
		p.bad("status", "a new user is active, inactive or before-verification, not %q", spec.Status)
	}
	p.checkPasswordHash("password_hash", spec.PasswordHash)
	p.checkOptionalName("resource_policy", spec.ResourcePolicy)
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	switch {
	case u.exists:
		return nil, alreadyExists(op, "user")
	case u.abandoned:
		return nil, Errorf(op, KindConflict, "the creation of this user was abandoned: its e-mail address was handed to another request")
	}
	return []Event{UserCreated{
		UserID: spec.ID, Email: strings.TrimSpace(spec.Email), Username: spec.Username, FullName: spec.FullName,
		Domain: spec.Domain, Role: spec.Role, Status: spec.Status, PasswordHash: spec.PasswordHash,
		ResourcePolicy: spec.ResourcePolicy, At: at,
	}}, nil
}

// Modify applies the changes: user.modified with the resulting fields
// when any of them changes, user.password-changed for a new password hash.
// A deleted user cannot be changed any more (KindConflict).
func (u *User) Modify(ch UserChanges, at time.Time) ([]Event, error) {
	const op = "user.modify"
	p := &problems{op: op}
	next := UserModified{Username: u.username, FullName: u.fullName, Role: u.role, Status: u.status, ResourcePolicy: u.policy, At: at}
	if ch.Username != nil {
		p.checkUsername("username", *ch.Username)
		next.Username = *ch.Username
	}
	if ch.FullName != nil {
		p.checkDescription("full_name", *ch.FullName)
		next.FullName = *ch.FullName
	}
	if ch.Role != nil {
		if !ch.Role.Valid() {
			p.bad("role", "unknown role %q (superadmin, admin, user, monitor, auditor, domain-auditor)", *ch.Role)
		}
		next.Role = *ch.Role
	}
	if ch.Status != nil {
		if !ch.Status.Valid() {
			p.bad("status", "unknown status %q (active, inactive, deleted, before-verification)", *ch.Status)
		}
		next.Status = *ch.Status
	}
	if ch.ResourcePolicy != nil {
		p.checkOptionalName("resource_policy", *ch.ResourcePolicy)
		next.ResourcePolicy = *ch.ResourcePolicy
	}
	if ch.PasswordHash != nil {
		p.checkPasswordHash("password_hash", *ch.PasswordHash)
	}
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if err := u.requireLive(op); err != nil {
		return nil, err
	}
	var events []Event
	if next.Username != u.username || next.FullName != u.fullName || next.Role != u.role ||
		next.Status != u.status || next.ResourcePolicy != u.policy {
		events = append(events, next)
	}
	if ch.PasswordHash != nil && *ch.PasswordHash != u.passwordHash {
		events = append(events, UserPasswordChanged{PasswordHash: *ch.PasswordHash, At: at})
	}
	return events, nil
}

// SetMainKeypair makes accessKey the user's main access key. Whether the
// keypair exists, is the user's and is active is the caller's to check
// (another stream).
func (u *User) SetMainKeypair(accessKey string, at time.Time) ([]Event, error) {
	const op = "user.set-main-keypair"
	p := &problems{op: op}
	p.checkAccessKey("access_key", accessKey)
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if err := u.requireLive(op); err != nil {
		return nil, err
	}
	if accessKey == u.mainKey {
		return nil, nil
	}
	return []Event{UserMainKeypairSet{AccessKey: accessKey, At: at}}, nil
}

// Abandon closes a user stream that holds no user, so that no user can be
// created under this id afterwards (see EmailReservation). A stream that
// holds a user is KindConflict: the e-mail address is taken for good.
// Abandoning again returns no events.
func (u *User) Abandon(id uuid.UUID, email string, at time.Time) ([]Event, error) {
	const op = "user.abandon"
	switch {
	case u.abandoned:
		return nil, nil
	case u.exists:
		return nil, Errorf(op, KindConflict, "the user was created")
	case id == uuid.Nil:
		return nil, Invalid(op, "id", "must be set")
	case at.IsZero():
		return nil, Invalid(op, "at", "must be set")
	}
	return []Event{UserCreationAbandoned{UserID: id, Email: email, At: at}}, nil
}

// requireLive refuses a user that does not exist (KindNotFound) or is
// deleted (KindConflict).
func (u *User) requireLive(op string) error {
	switch {
	case !u.exists:
		return NotFound(op, "user")
	case u.status == UserDeleted:
		return Errorf(op, KindConflict, "the user is deleted")
	}
	return nil
}

// RequireLive is requireLive for the callers that act on a user from
// another stream (adding it to a project, issuing it a keypair).
func (u *User) RequireLive(op string) error { return u.requireLive(op) }

// EmailReservation is the aggregate of a user-email-<key> stream: which
// user id an e-mail address belongs to. It makes e-mail addresses unique
// across user streams, which the event store cannot do in one append:
//
//  1. CreateUser reserves the address for a fresh user id (expected
//     revision: no stream). A second creation with the same address finds
//     the stream and fails with KindConflict.
//  2. It then creates the user's stream (no stream).
//
// A crash between 1 and 2 leaves a reservation for a user id that has no
// user. The same request (same request id) completes it: it finds its own
// reservation and creates the user under the reserved id. Any other
// request for that address may take the reservation over once it is older
// than a grace period: it first abandons the reserved id's user stream
// (user.creation-abandoned, no stream), which fails if the user was
// created meanwhile and makes a late step 2 of the first request fail,
// then moves the reservation to its own user id (expected revision: the
// one it read). So a user id never gets a user after its reservation was
// taken over, and two users never share an address.
type EmailReservation struct {
	stateOf
	email      string
	userID     uuid.UUID
	requestID  string
	reservedAt time.Time
}

func (r *EmailReservation) Email() string         { return r.email }
func (r *EmailReservation) UserID() uuid.UUID     { return r.userID }
func (r *EmailReservation) RequestID() string     { return r.requestID }
func (r *EmailReservation) ReservedAt() time.Time { return r.reservedAt }

// RehydrateEmailReservation folds a reservation stream's events.
func RehydrateEmailReservation(events []RecordedEvent) (*EmailReservation, error) {
	r := &EmailReservation{stateOf: stateOf{revision: -1}}
	if err := fold("user-email.rehydrate", events, r); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *EmailReservation) apply(ev Event) error {
	e, ok := ev.(UserEmailReserved)
	if !ok {
		return foreignEvent(ev, "e-mail reservation")
	}
	r.exists = true
	r.email, r.userID, r.requestID, r.reservedAt = e.Email, e.UserID, e.RequestID, e.At
	return nil
}

// Reserve records that the address belongs to user. Reserving it again
// for the same user returns no events; for another user it is
// KindConflict.
func (r *EmailReservation) Reserve(email string, user uuid.UUID, requestID string, at time.Time) ([]Event, error) {
	const op = "user.reserve-email"
	if err := checkReservation(op, email, user, at); err != nil {
		return nil, err
	}
	if r.exists {
		if r.userID == user {
			return nil, nil
		}
		return nil, Errorf(op, KindConflict, "the e-mail address is already in use")
	}
	return []Event{UserEmailReserved{Email: email, UserID: user, RequestID: requestID, At: at}}, nil
}

// TakeOver moves the reservation from the user id from, whose stream the
// caller has abandoned, to user. It is KindConflict unless the address is
// still reserved for from.
func (r *EmailReservation) TakeOver(from uuid.UUID, email string, user uuid.UUID, requestID string, at time.Time) ([]Event, error) {
	const op = "user.reserve-email"
	if err := checkReservation(op, email, user, at); err != nil {
		return nil, err
	}
	if !r.exists || r.userID != from {
		return nil, Errorf(op, KindConflict, "the e-mail reservation changed meanwhile")
	}
	return []Event{UserEmailReserved{Email: email, UserID: user, RequestID: requestID, At: at}}, nil
}

func checkReservation(op, email string, user uuid.UUID, at time.Time) error {
	p := &problems{op: op}
	p.checkEmail("email", email)
	if user == uuid.Nil {
		p.bad("user_id", "must be set")
	}
	p.checkAt(at)
	return p.err()
}
