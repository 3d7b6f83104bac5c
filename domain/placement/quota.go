package placement

import "github.com/cairnhq/cairn/domain"

// Quotas is the tenancy view of one round: for each keypair (by access
// key), user, project and domain, its slot limits and what it occupies
// now (the caller derives occupancy from events). A subject missing from
// its map has no limit.
type Quotas struct {
	Keypairs map[string]KeypairUsage
	Users    map[string]Usage
	Projects map[string]Usage
	Domains  map[string]Usage
}

// Unspecified says what limits a slot a policy does not name
// (default_for_unspecified).
type Unspecified uint8

const (
	// UnspecifiedUnlimited: a slot missing from Limits is not limited. The
	// zero value.
	UnspecifiedUnlimited Unspecified = iota
	// UnspecifiedLimited: a slot missing from Limits is limited to 0.
	UnspecifiedLimited
)

// Usage is one subject's slot limits and occupancy.
type Usage struct {
	// Limits caps what the subject's sessions may occupy at once, slot by
	// slot: occupied + requested ≤ limit.
	Limits      domain.Slots
	Unspecified Unspecified
	Occupied    domain.Slots
}

// KeypairUsage adds the keypair policy's session count limit.
type KeypairUsage struct {
	Usage
	// MaxConcurrentSessions caps the keypair's sessions holding resources;
	// 0 does not limit.
	MaxConcurrentSessions int
	// ConcurrentSessions is how many it has now.
	ConcurrentSessions int
}
