package domain

import (
	"time"

	"github.com/google/uuid"
)

// Wire names of the events of domains (domain-<name>), projects
// (project-<domain>/<name>), users (user-<uuid>), e-mail reservations
// (user-email-<lowercased e-mail>) and keypairs (keypair-<access key>).
const (
	TypeDomainCreated     = "domain.created"
	TypeDomainModified    = "domain.modified"
	TypeDomainActivated   = "domain.activated"
	TypeDomainDeactivated = "domain.deactivated"

	TypeProjectCreated       = "project.created"
	TypeProjectModified      = "project.modified"
	TypeProjectActivated     = "project.activated"
	TypeProjectDeactivated   = "project.deactivated"
	TypeProjectMemberAdded   = "project.member-added"
	TypeProjectMemberRemoved = "project.member-removed"

	TypeUserCreated           = "user.created"
	TypeUserModified          = "user.modified"
	TypeUserPasswordChanged   = "user.password-changed"
	TypeUserMainKeypairSet    = "user.main-keypair-set"
	TypeUserCreationAbandoned = "user.creation-abandoned"
	TypeUserEmailReserved     = "user.email-reserved"

	TypeKeypairIssued        = "keypair.issued"
	TypeKeypairModified      = "keypair.modified"
	TypeKeypairActivated     = "keypair.activated"
	TypeKeypairDeactivated   = "keypair.deactivated"
	TypeKeypairSecretRotated = "keypair.secret-rotated"
)

// DomainCreated: a domain exists, active.
type DomainCreated struct {
	Name                string       `json:"name"`
	Description         string       `json:"description"`
	TotalResourceSlots  Slots        `json:"total_resource_slots"`
	AllowedVFolderHosts VFolderHosts `json:"allowed_vfolder_hosts"`
	At                  time.Time    `json:"at"`
}

// DomainModified: the domain's settings are now these (every mutable
// field, the changed ones and the others).
type DomainModified struct {
	Description         string       `json:"description"`
	TotalResourceSlots  Slots        `json:"total_resource_slots"`
	AllowedVFolderHosts VFolderHosts `json:"allowed_vfolder_hosts"`
	At                  time.Time    `json:"at"`
}

// DomainActivated / DomainDeactivated: is_active changed.
type DomainActivated struct {
	At time.Time `json:"at"`
}

type DomainDeactivated struct {
	At time.Time `json:"at"`
}

// ProjectCreated: a project exists in its domain, active, without members.
type ProjectCreated struct {
	Domain              string       `json:"domain"`
	Name                string       `json:"name"`
	Description         string       `json:"description"`
	TotalResourceSlots  Slots        `json:"total_resource_slots"`
	AllowedVFolderHosts VFolderHosts `json:"allowed_vfolder_hosts"`
	ResourcePolicy      string       `json:"resource_policy"`
	At                  time.Time    `json:"at"`
}

// ProjectModified: the project's settings are now these.
type ProjectModified struct {
	Description         string       `json:"description"`
	TotalResourceSlots  Slots        `json:"total_resource_slots"`
	AllowedVFolderHosts VFolderHosts `json:"allowed_vfolder_hosts"`
	ResourcePolicy      string       `json:"resource_policy"`
	At                  time.Time    `json:"at"`
}

type ProjectActivated struct {
	At time.Time `json:"at"`
}

type ProjectDeactivated struct {
	At time.Time `json:"at"`
}

// ProjectMemberAdded / ProjectMemberRemoved: the project's stream owns its
// membership; a user's projects are a projection of these events.
type ProjectMemberAdded struct {
	UserID uuid.UUID `json:"user_id"`
	At     time.Time `json:"at"`
}

type ProjectMemberRemoved struct {
	UserID uuid.UUID `json:"user_id"`
	At     time.Time `json:"at"`
}

// UserCreated: a user exists. PasswordHash is what the password hasher
// produced; the plaintext never reaches an event.
type UserCreated struct {
	UserID         uuid.UUID  `json:"user_id"`
	Email          string     `json:"email"`
	Username       string     `json:"username"`
	FullName       string     `json:"full_name,omitempty"`
	Domain         string     `json:"domain"`
	Role           Role       `json:"role"`
	Status         UserStatus `json:"status"`
	PasswordHash   string     `json:"password_hash"`
	ResourcePolicy string     `json:"resource_policy"`
	At             time.Time  `json:"at"`
}

// UserModified: the user's mutable fields are now these.
type UserModified struct {
	Username       string     `json:"username"`
	FullName       string     `json:"full_name,omitempty"`
	Role           Role       `json:"role"`
	Status         UserStatus `json:"status"`
	ResourcePolicy string     `json:"resource_policy"`
	At             time.Time  `json:"at"`
}

// UserPasswordChanged: a new password hash replaces the old one.
type UserPasswordChanged struct {
	PasswordHash string    `json:"password_hash"`
	At           time.Time `json:"at"`
}

// UserMainKeypairSet: the user's main access key, whose keypair policy is
// the user's per-user limit.
type UserMainKeypairSet struct {
	AccessKey string    `json:"access_key"`
	At        time.Time `json:"at"`
}

// UserCreationAbandoned closes a user stream that was never created: the
// e-mail reservation naming this user id was left behind by a creation
// that did not finish, and is being handed to another one. Nothing can be
// created in the stream afterwards.
type UserCreationAbandoned struct {
	UserID uuid.UUID `json:"user_id"`
	Email  string    `json:"email"`
	At     time.Time `json:"at"`
}

// UserEmailReserved: the e-mail address belongs to the user id (the
// request id tells the creation that reserved it, so a retry of the same
// request completes it). A later one hands it to another user id.
type UserEmailReserved struct {
	Email     string    `json:"email"`
	UserID    uuid.UUID `json:"user_id"`
	RequestID string    `json:"request_id,omitempty"`
	At        time.Time `json:"at"`
}

// KeypairIssued: a keypair exists, active. The secret key is in the event:
// the request signature verifier needs it in clear (HMAC), so the event
// store holds it, like the database of any HMAC-signing service.
type KeypairIssued struct {
	AccessKey      string    `json:"access_key"`
	SecretKey      string    `json:"secret_key"`
	UserID         uuid.UUID `json:"user_id"`
	Domain         string    `json:"domain"`
	ResourcePolicy string    `json:"resource_policy"`
	RateLimit      int       `json:"rate_limit"`
	At             time.Time `json:"at"`
}

// KeypairModified: the keypair's policy and rate limit are now these.
type KeypairModified struct {
	ResourcePolicy string    `json:"resource_policy"`
	RateLimit      int       `json:"rate_limit"`
	At             time.Time `json:"at"`
}

type KeypairActivated struct {
	At time.Time `json:"at"`
}

type KeypairDeactivated struct {
	At time.Time `json:"at"`
}

// KeypairSecretRotated: a new secret key replaces the old one, which no
// longer signs anything.
type KeypairSecretRotated struct {
	SecretKey string    `json:"secret_key"`
	At        time.Time `json:"at"`
}

func (DomainCreated) EventType() string         { return TypeDomainCreated }
func (DomainModified) EventType() string        { return TypeDomainModified }
func (DomainActivated) EventType() string       { return TypeDomainActivated }
func (DomainDeactivated) EventType() string     { return TypeDomainDeactivated }
func (ProjectCreated) EventType() string        { return TypeProjectCreated }
func (ProjectModified) EventType() string       { return TypeProjectModified }
func (ProjectActivated) EventType() string      { return TypeProjectActivated }
func (ProjectDeactivated) EventType() string    { return TypeProjectDeactivated }
func (ProjectMemberAdded) EventType() string    { return TypeProjectMemberAdded }
func (ProjectMemberRemoved) EventType() string  { return TypeProjectMemberRemoved }
func (UserCreated) EventType() string           { return TypeUserCreated }
func (UserModified) EventType() string          { return TypeUserModified }
func (UserPasswordChanged) EventType() string   { return TypeUserPasswordChanged }
func (UserMainKeypairSet) EventType() string    { return TypeUserMainKeypairSet }
func (UserCreationAbandoned) EventType() string { return TypeUserCreationAbandoned }
func (UserEmailReserved) EventType() string     { return TypeUserEmailReserved }
func (KeypairIssued) EventType() string         { return TypeKeypairIssued }
func (KeypairModified) EventType() string       { return TypeKeypairModified }
func (KeypairActivated) EventType() string      { return TypeKeypairActivated }
func (KeypairDeactivated) EventType() string    { return TypeKeypairDeactivated }
func (KeypairSecretRotated) EventType() string  { return TypeKeypairSecretRotated }
