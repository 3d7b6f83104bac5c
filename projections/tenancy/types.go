package tenancy

import (
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// Domain is one domain as the read model shows it.
type Domain struct {
	Name                string              `json:"name"`
	Description         string              `json:"description"`
	IsActive            bool                `json:"is_active"`
	TotalResourceSlots  domain.Slots        `json:"total_resource_slots"`
	AllowedVFolderHosts domain.VFolderHosts `json:"allowed_vfolder_hosts"`
	CreatedAt           time.Time           `json:"created_at"`
	ModifiedAt          time.Time           `json:"modified_at"`
	// Position is the log position of the last event the row reflects.
	Position uint64 `json:"position"`
}

// Project is one project.
type Project struct {
	Domain              string              `json:"domain"`
	Name                string              `json:"name"`
	Description         string              `json:"description"`
	IsActive            bool                `json:"is_active"`
	TotalResourceSlots  domain.Slots        `json:"total_resource_slots"`
	AllowedVFolderHosts domain.VFolderHosts `json:"allowed_vfolder_hosts"`
	ResourcePolicy      string              `json:"resource_policy"`
	CreatedAt           time.Time           `json:"created_at"`
	ModifiedAt          time.Time           `json:"modified_at"`
	Position            uint64              `json:"position"`
}

// Member is one membership of a project.
type Member struct {
	Domain  string    `json:"domain"`
	Project string    `json:"project"`
	UserID  uuid.UUID `json:"user_id"`
	AddedAt time.Time `json:"added_at"`
}

// User is one user, without its password hash.
type User struct {
	ID             uuid.UUID         `json:"id"`
	Email          string            `json:"email"`
	Username       string            `json:"username"`
	FullName       string            `json:"full_name"`
	Domain         string            `json:"domain"`
	Role           domain.Role       `json:"role"`
	Status         domain.UserStatus `json:"status"`
	MainAccessKey  string            `json:"main_access_key"`
	ResourcePolicy string            `json:"resource_policy"`
	CreatedAt      time.Time         `json:"created_at"`
	ModifiedAt     time.Time         `json:"modified_at"`
	Position       uint64            `json:"position"`
}

// Login is what the password check needs: the user and its hash. It is
// never listed; Login reads one by e-mail address.
type Login struct {
	User
	PasswordHash string `json:"-"`
}

// Keypair is one keypair, without its secret key.
type Keypair struct {
	AccessKey       string     `json:"access_key"`
	UserID          uuid.UUID  `json:"user_id"`
	Domain          string     `json:"domain"`
	ResourcePolicy  string     `json:"resource_policy"`
	RateLimit       int        `json:"rate_limit"`
	IsActive        bool       `json:"is_active"`
	IsMain          bool       `json:"is_main"`
	CreatedAt       time.Time  `json:"created_at"`
	ModifiedAt      time.Time  `json:"modified_at"`
	SecretRotatedAt *time.Time `json:"secret_rotated_at,omitempty"`
	Position        uint64     `json:"position"`
}

// Credentials are what the request signature verifier needs of an access
// key: the secret key, whether the keypair is active, and who it speaks
// for (the owner's status decides too: only active users sign requests).
type Credentials struct {
	AccessKey      string            `json:"-"`
	SecretKey      string            `json:"-"`
	IsActive       bool              `json:"-"`
	RateLimit      int               `json:"-"`
	ResourcePolicy string            `json:"-"`
	UserID         uuid.UUID         `json:"-"`
	Email          string            `json:"-"`
	Role           domain.Role       `json:"-"`
	Domain         string            `json:"-"`
	UserStatus     domain.UserStatus `json:"-"`
}

// MaySign reports whether the keypair may sign requests now: it is active
// and its owner is active.
func (c Credentials) MaySign() bool { return c.IsActive && c.UserStatus == domain.UserActive }

// KeypairPolicy is one keypair resource policy.
type KeypairPolicy struct {
	Name string `json:"name"`
	domain.KeypairPolicySpec
	CreatedAt  time.Time `json:"created_at"`
	ModifiedAt time.Time `json:"modified_at"`
	Position   uint64    `json:"position"`
}

// StoragePolicy is one user or project resource policy.
type StoragePolicy struct {
	Name string `json:"name"`
	domain.StoragePolicySpec
	CreatedAt  time.Time `json:"created_at"`
	ModifiedAt time.Time `json:"modified_at"`
	Position   uint64    `json:"position"`
}

// ResourceGroup is one resource group with its access list.
type ResourceGroup struct {
	Name string `json:"name"`
	domain.ResourceGroupSpec
	Access     []domain.Grantee `json:"access"`
	CreatedAt  time.Time        `json:"created_at"`
	ModifiedAt time.Time        `json:"modified_at"`
	Position   uint64           `json:"position"`
}

// Image is one registered image.
type Image struct {
	Reference    string `json:"reference"`
	Architecture string `json:"architecture"`
	domain.ImageSpec
	RegisteredAt time.Time `json:"registered_at"`
	ModifiedAt   time.Time `json:"modified_at"`
	Position     uint64    `json:"position"`
}
