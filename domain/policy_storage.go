package domain

import (
	"fmt"
	"time"
)

// maxQuotaScopeSize bounds max_quota_scope_size: 1 EiB.
const maxQuotaScopeSize = 1 << 60

// StoragePolicySpec is what a user or project resource policy limits.
// Zero means no limit.
type StoragePolicySpec struct {
	MaxVFolderCount int `json:"max_vfolder_count"`
	// MaxQuotaScopeSize is in bytes.
	MaxQuotaScopeSize int64 `json:"max_quota_scope_size"`
}

// StoragePolicyChanges are the fields a modification sets; nil leaves a
// field as it is.
type StoragePolicyChanges struct {
	MaxVFolderCount   *int
	MaxQuotaScopeSize *int64
}

func (s StoragePolicySpec) check(p *problems) {
	if s.MaxVFolderCount < 0 || s.MaxVFolderCount > maxPolicyCount {
		p.bad("max_vfolder_count", "must be between 0 (no limit) and %d, not %d", maxPolicyCount, s.MaxVFolderCount)
	}
	if s.MaxQuotaScopeSize < 0 || s.MaxQuotaScopeSize > maxQuotaScopeSize {
		p.bad("max_quota_scope_size", "must be between 0 (no limit) and %d bytes, not %d", int64(maxQuotaScopeSize), s.MaxQuotaScopeSize)
	}
}

// PolicyScope says whose storage a StoragePolicy limits.
type PolicyScope string

const (
	ScopeUser    PolicyScope = "user"
	ScopeProject PolicyScope = "project"
)

// StoragePolicy is the aggregate of a user resource policy (stream
// user-policy-<name>) or a project resource policy (project-policy-<name>):
// both limit the number of folders and the quota scope size, with events
// of their own. Build it with RehydrateUserPolicy or
// RehydrateProjectPolicy.
type StoragePolicy struct {
	stateOf
	scope      PolicyScope
	name       string
	spec       StoragePolicySpec
	createdAt  time.Time
	modifiedAt time.Time
}

func (s *StoragePolicy) Scope() PolicyScope      { return s.scope }
func (s *StoragePolicy) Name() string            { return s.name }
func (s *StoragePolicy) Spec() StoragePolicySpec { return s.spec }
func (s *StoragePolicy) CreatedAt() time.Time    { return s.createdAt }
func (s *StoragePolicy) ModifiedAt() time.Time   { return s.modifiedAt }

// RehydrateUserPolicy folds a user policy stream's events.
func RehydrateUserPolicy(events []RecordedEvent) (*StoragePolicy, error) {
	return rehydrateStoragePolicy(ScopeUser, events)
}

// RehydrateProjectPolicy folds a project policy stream's events.
func RehydrateProjectPolicy(events []RecordedEvent) (*StoragePolicy, error) {
	return rehydrateStoragePolicy(ScopeProject, events)
}

func rehydrateStoragePolicy(scope PolicyScope, events []RecordedEvent) (*StoragePolicy, error) {
	s := &StoragePolicy{stateOf: stateOf{revision: -1}, scope: scope}
	if err := fold(string(scope)+"-policy.rehydrate", events, s); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *StoragePolicy) apply(ev Event) error {
	what := string(s.scope) + " policy"
	var (
		created bool
		name    string
		spec    StoragePolicySpec
		at      time.Time
	)
	switch e := ev.(type) {
	case UserPolicyCreated:
		created, name, spec, at = true, e.Name, e.StoragePolicySpec, e.At
	case ProjectPolicyCreated:
		created, name, spec, at = true, e.Name, e.StoragePolicySpec, e.At
	case UserPolicyModified:
		spec, at = e.StoragePolicySpec, e.At
	case ProjectPolicyModified:
		spec, at = e.StoragePolicySpec, e.At
	default:
		return foreignEvent(ev, what)
	}
	if s.eventScope(ev) != s.scope {
		return foreignEvent(ev, what)
	}
	switch {
	case created && s.exists:
		return createdTwice(what)
	case !created && !s.exists:
		return eventBeforeCreation(what)
	case created:
		s.exists, s.name, s.createdAt = true, name, at
	}
	s.spec, s.modifiedAt = spec, at
	return nil
}

func (*StoragePolicy) eventScope(ev Event) PolicyScope {
	switch ev.(type) {
	case UserPolicyCreated, UserPolicyModified:
		return ScopeUser
	}
	return ScopeProject
}

// Create records a new policy; an existing one of that name is
// KindConflict.
func (s *StoragePolicy) Create(name string, spec StoragePolicySpec, at time.Time) ([]Event, error) {
	op := string(s.scope) + "-policy.create"
	p := &problems{op: op}
	p.checkName("name", name)
	spec.check(p)
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if s.exists {
		return nil, alreadyExists(op, string(s.scope)+" policy")
	}
	switch s.scope {
	case ScopeUser:
		return []Event{UserPolicyCreated{Name: name, StoragePolicySpec: spec, At: at}}, nil
	case ScopeProject:
		return []Event{ProjectPolicyCreated{Name: name, StoragePolicySpec: spec, At: at}}, nil
	}
	return nil, Errorf(op, KindInternal, "%s", s.unknownScope())
}

// Modify applies the changes: a modified event with both limits when one
// changes.
func (s *StoragePolicy) Modify(ch StoragePolicyChanges, at time.Time) ([]Event, error) {
	op := string(s.scope) + "-policy.modify"
	p := &problems{op: op}
	next := s.spec
	set(&next.MaxVFolderCount, ch.MaxVFolderCount)
	set(&next.MaxQuotaScopeSize, ch.MaxQuotaScopeSize)
	next.check(p)
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if !s.exists {
		return nil, NotFound(op, string(s.scope)+" policy")
	}
	if next == s.spec {
		return nil, nil
	}
	switch s.scope {
	case ScopeUser:
		return []Event{UserPolicyModified{StoragePolicySpec: next, At: at}}, nil
	case ScopeProject:
		return []Event{ProjectPolicyModified{StoragePolicySpec: next, At: at}}, nil
	}
	return nil, Errorf(op, KindInternal, "%s", s.unknownScope())
}

func (s *StoragePolicy) unknownScope() string {
	return fmt.Sprintf("unknown policy scope %q", s.scope)
}
