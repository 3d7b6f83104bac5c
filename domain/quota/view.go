package quota

import (
	"fmt"
	"slices"

	"github.com/cairnhq/cairn/domain"
)

// Usage is one subject's slot limit and what it occupies.
type Usage struct {
	Limit    Limit
	Occupied domain.Slots
}

// KeypairUsage adds the keypair policy's session count limit.
type KeypairUsage struct {
	Usage
	// MaxConcurrentSessions caps the keypair's concurrent sessions; 0
	// does not limit.
	MaxConcurrentSessions int
	// ConcurrentSessions is how many it has now.
	ConcurrentSessions int
}

// View is the quota view of one scheduling round: for each keypair, user,
// project and domain with a pending session, its limits and what it
// occupies. A user, project or domain missing from its map has no limit;
// every keypair of a pending session is present (with an unlimited Limit
// when it has no policy), with its occupancy and concurrent sessions.
// Charge counts the round's placements, so that two sessions placed in
// one round cannot together exceed a limit each fits alone.
type View struct {
	Keypairs map[string]KeypairUsage
	Users    map[string]Usage
	Projects map[string]Usage
	Domains  map[string]Usage
}

// NewView builds the view of the subjects of sessions (the pending ones)
// from the limits and a snapshot of occupancy.
func NewView(limits *Limits, occ Snapshot, sessions []Session) View {
	v := View{Keypairs: map[string]KeypairUsage{}, Users: map[string]Usage{}, Projects: map[string]Usage{}, Domains: map[string]Usage{}}
	for _, s := range sessions {
		ak := s.Key(ScopeKeypair)
		if _, done := v.Keypairs[ak]; !done {
			o := occ.Of(ScopeKeypair, ak)
			ku := KeypairUsage{Usage: Usage{Limit: Limit{Unspecified: domain.UnspecifiedUnlimited}, Occupied: o.Occupied.Clone()}, ConcurrentSessions: o.Concurrent}
			if p, ok := limits.KeypairPolicy(ak); ok {
				ku.Limit, ku.MaxConcurrentSessions = KeypairLimit(p), p.MaxConcurrentSessions
			}
			v.Keypairs[ak] = ku
		}
		for _, sc := range []struct {
			scope Scope
			m     map[string]Usage
		}{{ScopeUser, v.Users}, {ScopeProject, v.Projects}, {ScopeDomain, v.Domains}} {
			key := s.Key(sc.scope)
			if _, done := sc.m[key]; done {
				continue
			}
			if l, ok := limits.Of(sc.scope, key); ok {
				sc.m[key] = Usage{Limit: l, Occupied: occ.Of(sc.scope, key).Occupied.Clone()}
			}
		}
	}
	return v
}

// Failure is one failed quota check.
type Failure struct {
	Scope Scope
	// Subject is the access key, user id, project key or domain name.
	Subject string
	// Limit is the policy field: max_concurrent_sessions or
	// total_resource_slots.
	Limit string
	// Slot is the slot over its limit (total_resource_slots only).
	Slot domain.SlotName
	// Message says it for people. It names the limit and the requested
	// amount, never the occupancy of the moment, so that a session waiting
	// for the same reasons keeps the same message.
	Message string
}

// Check returns every quota check the session fails, in a stable order:
// the keypair's concurrency, then the keypair's, the user's, the
// project's and the domain's slot limits slot by slot (occupied +
// requested ≤ limit).
func (v *View) Check(s Session) []Failure {
	var out []Failure
	ak := s.Key(ScopeKeypair)
	kp, hasKP := v.Keypairs[ak]
	if hasKP && kp.MaxConcurrentSessions > 0 && kp.ConcurrentSessions >= kp.MaxConcurrentSessions {
		out = append(out, Failure{Scope: ScopeKeypair, Subject: ak, Limit: LimitConcurrent,
			Message: fmt.Sprintf("keypair %s: %s %d reached", ak, LimitConcurrent, kp.MaxConcurrentSessions)})
	}
	for _, sc := range Scopes {
		key := s.Key(sc)
		u, ok := v.usage(sc, key)
		if !ok {
			continue
		}
		for _, over := range u.Limit.Over(u.Occupied, s.Requested) {
			out = append(out, Failure{Scope: sc, Subject: key, Limit: LimitTotalSlots, Slot: over.Slot,
				Message: fmt.Sprintf("%s %s: %s %s: %s (requested %s)", sc, key, LimitTotalSlots, over.Slot,
					capText(over), domain.FormatAmount(over.Slot, over.Requested))})
		}
	}
	return out
}

func capText(c SlotCap) string {
	if c.Cap == 0 {
		return "not allowed"
	}
	return "limit " + domain.FormatAmount(c.Slot, c.Cap) + " would be exceeded"
}

// Charge counts a session placed in this round: its request is added to
// what its subjects occupy, and it is one more concurrent session of its
// keypair.
func (v *View) Charge(s Session) {
	ak := s.Key(ScopeKeypair)
	kp := v.Keypairs[ak]
	kp.ConcurrentSessions++
	kp.Occupied = addInto(kp.Occupied, s.Requested)
	v.Keypairs[ak] = kp
	for _, sc := range []struct {
		scope Scope
		m     map[string]Usage
	}{{ScopeUser, v.Users}, {ScopeProject, v.Projects}, {ScopeDomain, v.Domains}} {
		key := s.Key(sc.scope)
		if u, ok := sc.m[key]; ok {
			u.Occupied = addInto(u.Occupied, s.Requested)
			sc.m[key] = u
		}
	}
}

func (v *View) usage(scope Scope, key string) (Usage, bool) {
	switch scope {
	case ScopeKeypair:
		kp, ok := v.Keypairs[key]
		return kp.Usage, ok
	case ScopeUser:
		u, ok := v.Users[key]
		return u, ok
	case ScopeProject:
		u, ok := v.Projects[key]
		return u, ok
	case ScopeDomain:
		u, ok := v.Domains[key]
		return u, ok
	}
	return Usage{}, false
}

// Details returns the failures' messages, for a pending session's status
// data.
func Details(failures []Failure) []string {
	out := make([]string, len(failures))
	for i, f := range failures {
		out[i] = f.Message
	}
	return slices.Clip(out)
}
