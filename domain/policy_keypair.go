package domain

import "time"

// DefaultForUnspecified says what a keypair policy allows of a slot its
// total_resource_slots does not name.
type DefaultForUnspecified string

const (
	// UnspecifiedLimited: an unnamed slot is limited to zero.
	UnspecifiedLimited DefaultForUnspecified = "limited"
	// UnspecifiedUnlimited: an unnamed slot has no limit.
	UnspecifiedUnlimited DefaultForUnspecified = "unlimited"
)

// Bounds of keypair policy counts.
const (
	maxPolicyCount = 1_000_000
)

// KeypairPolicySpec is what a keypair resource policy limits. Counts of 0
// mean no limit, except
// max_containers_per_session (at least 1); timeouts are in seconds, 0
// meaning never.
type KeypairPolicySpec struct {
	TotalResourceSlots             Slots                 `json:"total_resource_slots"`
	DefaultForUnspecified          DefaultForUnspecified `json:"default_for_unspecified"`
	MaxConcurrentSessions          int                   `json:"max_concurrent_sessions"`
	MaxContainersPerSession        int                   `json:"max_containers_per_session"`
	MaxPendingSessionCount         int                   `json:"max_pending_session_count"`
	MaxPendingSessionResourceSlots Slots                 `json:"max_pending_session_resource_slots"`
	IdleTimeout                    int64                 `json:"idle_timeout"`
	MaxSessionLifetime             int64                 `json:"max_session_lifetime"`
	AllowedVFolderHosts            VFolderHosts          `json:"allowed_vfolder_hosts"`
}

// SlotLimit returns the policy's limit on one slot of total_resource_slots,
// and false when the slot is unlimited (unnamed, with
// default_for_unspecified unlimited).
func (s KeypairPolicySpec) SlotLimit(name SlotName) (Quantity, bool) {
	if q, ok := s.TotalResourceSlots[name]; ok {
		return q, true
	}
	if s.DefaultForUnspecified == UnspecifiedUnlimited {
		return 0, false
	}
	return 0, true
}

func (s KeypairPolicySpec) clone() KeypairPolicySpec {
	s.TotalResourceSlots = s.TotalResourceSlots.Clone()
	s.MaxPendingSessionResourceSlots = s.MaxPendingSessionResourceSlots.Clone()
	s.AllowedVFolderHosts = s.AllowedVFolderHosts.Clone()
	return s
}

func (s KeypairPolicySpec) equal(o KeypairPolicySpec) bool {
	return sameLimits(s.TotalResourceSlots, o.TotalResourceSlots) && s.DefaultForUnspecified == o.DefaultForUnspecified &&
		s.MaxConcurrentSessions == o.MaxConcurrentSessions && s.MaxContainersPerSession == o.MaxContainersPerSession &&
		s.MaxPendingSessionCount == o.MaxPendingSessionCount &&
		sameLimits(s.MaxPendingSessionResourceSlots, o.MaxPendingSessionResourceSlots) &&
		s.IdleTimeout == o.IdleTimeout && s.MaxSessionLifetime == o.MaxSessionLifetime &&
		s.AllowedVFolderHosts.Equal(o.AllowedVFolderHosts)
}

// normalized validates the spec and returns it with its defaults
// (default_for_unspecified limited, one container per session) and its
// slots and hosts normalised.
func (s KeypairPolicySpec) normalized(p *problems) KeypairPolicySpec {
	out := s.clone()
	out.TotalResourceSlots = p.slotLimits("total_resource_slots", s.TotalResourceSlots)
	switch s.DefaultForUnspecified {
	case "":
		out.DefaultForUnspecified = UnspecifiedLimited
	case UnspecifiedLimited, UnspecifiedUnlimited:
	default:
		p.bad("default_for_unspecified", "must be limited or unlimited, not %q", s.DefaultForUnspecified)
	}
	for _, c := range []struct {
		field string
		v     int
	}{
		{"max_concurrent_sessions", s.MaxConcurrentSessions},
		{"max_pending_session_count", s.MaxPendingSessionCount},
	} {
		if c.v < 0 || c.v > maxPolicyCount {
			p.bad(c.field, "must be between 0 (no limit) and %d, not %d", maxPolicyCount, c.v)
		}
	}
	if s.MaxContainersPerSession == 0 {
		out.MaxContainersPerSession = 1
	} else if s.MaxContainersPerSession < 1 || s.MaxContainersPerSession > MaxClusterSize {
		p.bad("max_containers_per_session", "must be between 1 and %d, not %d", MaxClusterSize, s.MaxContainersPerSession)
	}
	out.MaxPendingSessionResourceSlots = p.slotLimits("max_pending_session_resource_slots", s.MaxPendingSessionResourceSlots)
	p.checkSeconds("idle_timeout", s.IdleTimeout)
	p.checkSeconds("max_session_lifetime", s.MaxSessionLifetime)
	out.AllowedVFolderHosts = p.vfolderHosts("allowed_vfolder_hosts", s.AllowedVFolderHosts)
	return out
}

// KeypairPolicyChanges are the fields a modification sets; nil leaves a
// field as it is.
type KeypairPolicyChanges struct {
	TotalResourceSlots             *Slots
	DefaultForUnspecified          *DefaultForUnspecified
	MaxConcurrentSessions          *int
	MaxContainersPerSession        *int
	MaxPendingSessionCount         *int
	MaxPendingSessionResourceSlots *Slots
	IdleTimeout                    *int64
	MaxSessionLifetime             *int64
	AllowedVFolderHosts            *VFolderHosts
}

func (ch KeypairPolicyChanges) applyTo(s KeypairPolicySpec) KeypairPolicySpec {
	s = s.clone()
	set(&s.TotalResourceSlots, ch.TotalResourceSlots)
	set(&s.DefaultForUnspecified, ch.DefaultForUnspecified)
	set(&s.MaxConcurrentSessions, ch.MaxConcurrentSessions)
	set(&s.MaxContainersPerSession, ch.MaxContainersPerSession)
	set(&s.MaxPendingSessionCount, ch.MaxPendingSessionCount)
	set(&s.MaxPendingSessionResourceSlots, ch.MaxPendingSessionResourceSlots)
	set(&s.IdleTimeout, ch.IdleTimeout)
	set(&s.MaxSessionLifetime, ch.MaxSessionLifetime)
	set(&s.AllowedVFolderHosts, ch.AllowedVFolderHosts)
	return s
}

// set copies *v to *dst when v is not nil.
func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// KeypairPolicy is the keypair resource policy aggregate (stream
// keypair-policy-<name>). The zero KeypairPolicy does not exist.
type KeypairPolicy struct {
	stateOf
	name       string
	spec       KeypairPolicySpec
	createdAt  time.Time
	modifiedAt time.Time
}

func (k *KeypairPolicy) Name() string            { return k.name }
func (k *KeypairPolicy) Spec() KeypairPolicySpec { return k.spec.clone() }
func (k *KeypairPolicy) CreatedAt() time.Time    { return k.createdAt }
func (k *KeypairPolicy) ModifiedAt() time.Time   { return k.modifiedAt }

// RehydrateKeypairPolicy folds a keypair policy stream's events.
func RehydrateKeypairPolicy(events []RecordedEvent) (*KeypairPolicy, error) {
	k := &KeypairPolicy{stateOf: stateOf{revision: -1}}
	if err := fold("keypair-policy.rehydrate", events, k); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *KeypairPolicy) apply(ev Event) error {
	if _, first := ev.(KeypairPolicyCreated); first == k.exists {
		if first {
			return createdTwice("keypair policy")
		}
		return eventBeforeCreation("keypair policy")
	}
	switch e := ev.(type) {
	case KeypairPolicyCreated:
		k.exists, k.name, k.spec, k.createdAt, k.modifiedAt = true, e.Name, e.KeypairPolicySpec.clone(), e.At, e.At
	case KeypairPolicyModified:
		k.spec, k.modifiedAt = e.KeypairPolicySpec.clone(), e.At
	default:
		return foreignEvent(ev, "keypair policy")
	}
	return nil
}

// Create records a new keypair policy; an existing one of that name is
// KindConflict.
func (k *KeypairPolicy) Create(name string, spec KeypairPolicySpec, at time.Time) ([]Event, error) {
	const op = "keypair-policy.create"
	p := &problems{op: op}
	p.checkName("name", name)
	spec = spec.normalized(p)
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if k.exists {
		return nil, alreadyExists(op, "keypair policy")
	}
	return []Event{KeypairPolicyCreated{Name: name, KeypairPolicySpec: spec, At: at}}, nil
}

// Modify applies the changes: keypair-policy.modified with every limit
// when any changes.
func (k *KeypairPolicy) Modify(ch KeypairPolicyChanges, at time.Time) ([]Event, error) {
	const op = "keypair-policy.modify"
	p := &problems{op: op}
	if ch.MaxContainersPerSession != nil && *ch.MaxContainersPerSession == 0 {
		// 0 takes the default on creation only.
		p.bad("max_containers_per_session", "must be between 1 and %d, not 0", MaxClusterSize)
	}
	next := ch.applyTo(k.spec).normalized(p)
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if !k.exists {
		return nil, NotFound(op, "keypair policy")
	}
	if next.equal(k.spec) {
		return nil, nil
	}
	return []Event{KeypairPolicyModified{KeypairPolicySpec: next, At: at}}, nil
}
