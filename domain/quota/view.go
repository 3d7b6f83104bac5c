package quota

import (
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
)

// View builds the quota view placement checks a round against
// (placement.Quotas, whose checks report every failure: the keypair's
// max_concurrent_sessions, and the keypair's, user's, project's and
// domain's total_resource_slots, occupied + requested ≤ limit, counting
// the round's earlier placements). It covers the subjects of sessions
// (the pending ones):
//   - every keypair of a session, with its occupancy and concurrent
//     sessions, and its policy's limits when it has one (unlimited
//     otherwise);
//   - users (by id: their main keypair's policy), projects (by
//     domain.ProjectKey, the key placement.Session.Project must carry) and
//     domains that have a limit; the others are left out (not limited).
func View(limits LimitSource, occ OccupancySource, sessions []Session) placement.Quotas {
	q := placement.Quotas{
		Keypairs: map[string]placement.KeypairUsage{}, Users: map[string]placement.Usage{},
		Projects: map[string]placement.Usage{}, Domains: map[string]placement.Usage{},
	}
	for _, s := range sessions {
		ak := s.Key(ScopeKeypair)
		if _, done := q.Keypairs[ak]; !done {
			o := occ.Of(ScopeKeypair, ak)
			ku := placement.KeypairUsage{Usage: placement.Usage{Occupied: o.Occupied.Clone()}, ConcurrentSessions: o.Concurrent}
			if p, ok := limits.KeypairPolicy(ak); ok {
				ku.Usage = usage(KeypairLimit(p), o.Occupied)
				ku.MaxConcurrentSessions = p.MaxConcurrentSessions
			}
			q.Keypairs[ak] = ku
		}
		for _, sc := range []struct {
			scope Scope
			m     map[string]placement.Usage
		}{{ScopeUser, q.Users}, {ScopeProject, q.Projects}, {ScopeDomain, q.Domains}} {
			key := s.Key(sc.scope)
			if _, done := sc.m[key]; done {
				continue
			}
			if l, ok := limits.Of(sc.scope, key); ok {
				sc.m[key] = usage(l, occ.Of(sc.scope, key).Occupied)
			}
		}
	}
	return q
}

// OccupancySource is where View reads what subjects hold (Occupied and
// Concurrent): a Snapshot, or a Ledger's running totals (Holdings).
type OccupancySource interface {
	Of(scope Scope, key string) Occupancy
}

var (
	_ OccupancySource = Snapshot(nil)
	_ OccupancySource = Holdings{}
)

// LimitSource is where View reads the limits: Limits (folded from the
// log, for the scheduler) or the tenancy read model (for explanations).
type LimitSource interface {
	// KeypairPolicy returns the policy of the keypair with the access key.
	KeypairPolicy(accessKey string) (domain.KeypairPolicySpec, bool)
	// Of returns a subject's slot limit, false when it has none.
	Of(scope Scope, key string) (Limit, bool)
}

var _ LimitSource = (*Limits)(nil)

func usage(l Limit, occupied domain.Slots) placement.Usage {
	u := placement.Usage{Limits: l.Slots.Clone(), Occupied: occupied.Clone(), Unspecified: placement.UnspecifiedUnlimited}
	if l.Unspecified == domain.UnspecifiedLimited {
		u.Unspecified = placement.UnspecifiedLimited
	}
	return u
}
