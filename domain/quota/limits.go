package quota

import (
	"github.com/cairnhq/cairn/domain"
)

// Limit caps what a subject's sessions may occupy at once, slot by slot.
type Limit struct {
	// Slots are the named caps.
	Slots domain.Slots
	// Unspecified says whether a slot Slots does not name is limited to 0
	// (domain.UnspecifiedLimited) or not limited (anything else).
	Unspecified domain.DefaultForUnspecified
}

// Cap returns the cap on one slot, and false when the slot is not
// limited.
func (l Limit) Cap(slot domain.SlotName) (domain.Quantity, bool) {
	if q, ok := l.Slots[slot]; ok {
		return q, true
	}
	if l.Unspecified == domain.UnspecifiedLimited {
		return 0, true
	}
	return 0, false
}

// IsUnlimited reports whether the limit caps nothing.
func (l Limit) IsUnlimited() bool {
	return len(l.Slots) == 0 && l.Unspecified != domain.UnspecifiedLimited
}

// Over returns, sorted, the slots of request that would exceed the cap
// once added to occupied, with their caps.
func (l Limit) Over(occupied, request domain.Slots) []SlotCap {
	var out []SlotCap
	for _, name := range request.Names() {
		want := request[name]
		if want <= 0 {
			continue
		}
		if c, limited := l.Cap(name); limited && occupied[name] > c-want {
			out = append(out, SlotCap{Slot: name, Cap: c, Requested: want})
		}
	}
	return out
}

// SlotCap is one slot over its cap: the cap and what was requested.
type SlotCap struct {
	Slot      domain.SlotName
	Cap       domain.Quantity
	Requested domain.Quantity
}

// KeypairLimit is the slot limit of a keypair policy: its
// total_resource_slots with its default_for_unspecified (limited when
// not set, as policies are created).
func KeypairLimit(spec domain.KeypairPolicySpec) Limit {
	u := spec.DefaultForUnspecified
	if u == "" {
		u = domain.UnspecifiedLimited
	}
	return Limit{Slots: spec.TotalResourceSlots.Clone(), Unspecified: u}
}

// TotalLimit is the slot limit of a project's or a domain's
// total_resource_slots: unnamed slots are unlimited.
func TotalLimit(total domain.Slots) Limit {
	return Limit{Slots: total.Clone(), Unspecified: domain.UnspecifiedUnlimited}
}

// PendingLimit is the limit of max_pending_session_resource_slots: only
// the slots it names are limited.
func PendingLimit(spec domain.KeypairPolicySpec) Limit {
	return Limit{Slots: spec.MaxPendingSessionResourceSlots.Clone(), Unspecified: domain.UnspecifiedUnlimited}
}

// keypairInfo is what limits need of a keypair.
type keypairInfo struct {
	userID string
	policy string
}

// Limits folds the tenancy events that carry limits. Apply each event
// with the key of its stream (the object it is about); other events are
// ignored. The zero Limits is not usable: build it with NewLimits.
type Limits struct {
	keypairs map[string]keypairInfo
	policies map[string]domain.KeypairPolicySpec
	mainKeys map[string]string
	projects map[string]domain.Slots
	domains  map[string]domain.Slots
}

// NewLimits returns limits that know of no object.
func NewLimits() *Limits {
	return &Limits{
		keypairs: map[string]keypairInfo{}, policies: map[string]domain.KeypairPolicySpec{},
		mainKeys: map[string]string{}, projects: map[string]domain.Slots{}, domains: map[string]domain.Slots{},
	}
}

// ApplyDomain folds an event of the domain's stream (domain-<name>).
func (l *Limits) ApplyDomain(name string, ev domain.Event) {
	switch e := ev.(type) {
	case domain.DomainCreated:
		l.domains[e.Name] = e.TotalResourceSlots.Clone()
	case domain.DomainModified:
		l.domains[name] = e.TotalResourceSlots.Clone()
	}
}

// ApplyProject folds an event of a project's stream; key is
// domain.ProjectKey(domain, name).
func (l *Limits) ApplyProject(key string, ev domain.Event) {
	switch e := ev.(type) {
	case domain.ProjectCreated:
		l.projects[domain.ProjectKey(e.Domain, e.Name)] = e.TotalResourceSlots.Clone()
	case domain.ProjectModified:
		l.projects[key] = e.TotalResourceSlots.Clone()
	}
}

// ApplyUser folds an event of a user's stream (user-<id>).
func (l *Limits) ApplyUser(id string, ev domain.Event) {
	if e, ok := ev.(domain.UserMainKeypairSet); ok {
		l.mainKeys[id] = e.AccessKey
	}
}

// ApplyKeypair folds an event of a keypair's stream (keypair-<access key>).
func (l *Limits) ApplyKeypair(accessKey string, ev domain.Event) {
	switch e := ev.(type) {
	case domain.KeypairIssued:
		l.keypairs[e.AccessKey] = keypairInfo{userID: e.UserID.String(), policy: e.ResourcePolicy}
	case domain.KeypairModified:
		k := l.keypairs[accessKey]
		k.policy = e.ResourcePolicy
		l.keypairs[accessKey] = k
	}
}

// ApplyKeypairPolicy folds an event of a keypair policy's stream
// (keypair-policy-<name>).
func (l *Limits) ApplyKeypairPolicy(name string, ev domain.Event) {
	switch e := ev.(type) {
	case domain.KeypairPolicyCreated:
		l.policies[e.Name] = e.KeypairPolicySpec
	case domain.KeypairPolicyModified:
		l.policies[name] = e.KeypairPolicySpec
	}
}

// KeypairPolicy returns the policy of a keypair, and false when the
// keypair or its policy is unknown (nothing limits it).
func (l *Limits) KeypairPolicy(accessKey string) (domain.KeypairPolicySpec, bool) {
	k, ok := l.keypairs[accessKey]
	if !ok {
		return domain.KeypairPolicySpec{}, false
	}
	p, ok := l.policies[k.policy]
	return p, ok
}

// UserPolicy returns the policy of the user's main keypair: the user's
// per-user limit.
func (l *Limits) UserPolicy(userID string) (domain.KeypairPolicySpec, bool) {
	ak, ok := l.mainKeys[userID]
	if !ok {
		return domain.KeypairPolicySpec{}, false
	}
	return l.KeypairPolicy(ak)
}

// ProjectTotal returns a project's total_resource_slots (key:
// domain.ProjectKey), and false when the project is unknown.
func (l *Limits) ProjectTotal(key string) (domain.Slots, bool) {
	s, ok := l.projects[key]
	return s, ok
}

// DomainTotal returns a domain's total_resource_slots, and false when the
// domain is unknown.
func (l *Limits) DomainTotal(name string) (domain.Slots, bool) {
	s, ok := l.domains[name]
	return s, ok
}

// Of returns the slot limit of a subject, and false when nothing limits
// it (unknown, or no policy).
func (l *Limits) Of(scope Scope, key string) (Limit, bool) {
	switch scope {
	case ScopeKeypair:
		if p, ok := l.KeypairPolicy(key); ok {
			return KeypairLimit(p), true
		}
	case ScopeUser:
		if p, ok := l.UserPolicy(key); ok {
			return KeypairLimit(p), true
		}
	case ScopeProject:
		if s, ok := l.ProjectTotal(key); ok && len(s) > 0 {
			return TotalLimit(s), true
		}
	case ScopeDomain:
		if s, ok := l.DomainTotal(key); ok && len(s) > 0 {
			return TotalLimit(s), true
		}
	}
	return Limit{}, false
}
