package domain

import "time"

// Wire names of the events of resource policies: keypair policies
// (keypair-policy-<name>), user policies (user-policy-<name>) and project
// policies (project-policy-<name>).
const (
	TypeKeypairPolicyCreated  = "keypair-policy.created"
	TypeKeypairPolicyModified = "keypair-policy.modified"
	TypeUserPolicyCreated     = "user-policy.created"
	TypeUserPolicyModified    = "user-policy.modified"
	TypeProjectPolicyCreated  = "project-policy.created"
	TypeProjectPolicyModified = "project-policy.modified"
)

// KeypairPolicyCreated: a keypair resource policy exists with these limits.
type KeypairPolicyCreated struct {
	Name string `json:"name"`
	KeypairPolicySpec
	At time.Time `json:"at"`
}

// KeypairPolicyModified: the policy's limits are now these (all of them).
type KeypairPolicyModified struct {
	KeypairPolicySpec
	At time.Time `json:"at"`
}

// UserPolicyCreated: a user resource policy exists with these limits.
type UserPolicyCreated struct {
	Name string `json:"name"`
	StoragePolicySpec
	At time.Time `json:"at"`
}

// UserPolicyModified: the policy's limits are now these.
type UserPolicyModified struct {
	StoragePolicySpec
	At time.Time `json:"at"`
}

// ProjectPolicyCreated: a project resource policy exists with these limits.
type ProjectPolicyCreated struct {
	Name string `json:"name"`
	StoragePolicySpec
	At time.Time `json:"at"`
}

// ProjectPolicyModified: the policy's limits are now these.
type ProjectPolicyModified struct {
	StoragePolicySpec
	At time.Time `json:"at"`
}

func (KeypairPolicyCreated) EventType() string  { return TypeKeypairPolicyCreated }
func (KeypairPolicyModified) EventType() string { return TypeKeypairPolicyModified }
func (UserPolicyCreated) EventType() string     { return TypeUserPolicyCreated }
func (UserPolicyModified) EventType() string    { return TypeUserPolicyModified }
func (ProjectPolicyCreated) EventType() string  { return TypeProjectPolicyCreated }
func (ProjectPolicyModified) EventType() string { return TypeProjectPolicyModified }
