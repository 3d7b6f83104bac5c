package quota

import (
	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// Scope is the kind of subject a quota limits.
type Scope string

const (
	ScopeKeypair Scope = "keypair"
	ScopeUser    Scope = "user"
	ScopeProject Scope = "project"
	ScopeDomain  Scope = "domain"
)

// Scopes lists every scope, keypair first.
var Scopes = []Scope{ScopeKeypair, ScopeUser, ScopeProject, ScopeDomain}

// Names of the limits the checks name in their failures and errors: the
// wire names of the policy fields.
const (
	LimitTotalSlots      = "total_resource_slots"
	LimitConcurrent      = "max_concurrent_sessions"
	LimitContainers      = "max_containers_per_session"
	LimitPendingCount    = "max_pending_session_count"
	LimitPendingSlots    = "max_pending_session_resource_slots"
	LimitIdleTimeout     = "idle_timeout"
	LimitSessionLifetime = "max_session_lifetime"
)

// Session is what quotas know of a session: whose it is and what it asks
// in total (the sum over its kernels).
type Session struct {
	ID      uuid.UUID
	Owner   domain.Owner
	Domain  string
	Project string
	// Kernels is the number of kernels (cluster size).
	Kernels int
	// Requested is the sum of the kernels' slots.
	Requested domain.Slots
}

// SessionOf is the session a session.requested event creates.
func SessionOf(e domain.SessionRequested) Session {
	total := domain.Slots{}
	for _, k := range e.Kernels {
		total = total.Add(k.Slots)
	}
	return Session{ID: e.SessionID, Owner: e.Owner, Domain: e.Domain, Project: e.Project, Kernels: len(e.Kernels), Requested: nonZero(total)}
}

// Key returns the session's subject in scope: its access key, user id,
// project key (domain.ProjectKey) or domain name.
func (s Session) Key(scope Scope) string {
	switch scope {
	case ScopeKeypair:
		return s.Owner.AccessKey
	case ScopeUser:
		return s.Owner.UserID
	case ScopeProject:
		return domain.ProjectKey(s.Domain, s.Project)
	case ScopeDomain:
		return s.Domain
	}
	return ""
}

// nonZero returns s without zero amounts (nil when nothing is left), so
// that equal amounts compare equal however they were summed.
func nonZero(s domain.Slots) domain.Slots {
	var out domain.Slots
	for k, v := range s {
		if v != 0 {
			if out == nil {
				out = domain.Slots{}
			}
			out[k] = v
		}
	}
	return out
}
