package occupancy

import (
	"context"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/cairnhq/cairn/domain/quota"
)

// Quotas is the quota view placement checks the sessions against, built
// by quota.View (the scheduler's own rules) from the read models instead
// of the log: the occupancy of every subject (Snapshot, one statement per
// scope) and the limits of the sessions' keypairs, users, projects and
// domains (the tenancy read model, one lookup per distinct subject).
// Explanations of waiting sessions use it; the read models may lag the
// scheduler's own fold by what the projectors have not applied yet.
func (s Standings) Quotas(ctx context.Context, sessions []quota.Session) (placement.Quotas, error) {
	snap, err := s.Occupancy.Snapshot(ctx)
	if err != nil {
		return placement.Quotas{}, err
	}
	l := &readLimits{s: s, ctx: ctx,
		policies: map[string]*domain.KeypairPolicySpec{}, users: map[string]*domain.KeypairPolicySpec{},
		projects: map[string]domain.Slots{}, domains: map[string]domain.Slots{}}
	for _, q := range sessions {
		l.load(q)
	}
	if l.err != nil {
		return placement.Quotas{}, l.err
	}
	return quota.View(l, snap, sessions), nil
}

// readLimits are the limits of a set of subjects read from the tenancy
// read model (quota.LimitSource). A subject the read model does not know
// limits nothing, as in Standing.
type readLimits struct {
	s   Standings
	ctx context.Context
	err error
	// policies by access key, users by id (their main keypair's policy);
	// nil when there is none.
	policies map[string]*domain.KeypairPolicySpec
	users    map[string]*domain.KeypairPolicySpec
	projects map[string]domain.Slots
	domains  map[string]domain.Slots
}

var _ quota.LimitSource = (*readLimits)(nil)

// load reads what the session's subjects are limited by, once each.
func (l *readLimits) load(q quota.Session) {
	if l.err != nil {
		return
	}
	l.policyOf(q.Owner.AccessKey)
	if _, done := l.users[q.Owner.UserID]; !done {
		l.users[q.Owner.UserID] = nil
		if id, err := uuid.Parse(q.Owner.UserID); err == nil {
			switch u, err := l.s.Tenancy.GetUser(l.ctx, id); {
			case absent(err) != nil:
				l.err = err
			case err == nil && u.MainAccessKey != "":
				l.users[q.Owner.UserID] = l.policyOf(u.MainAccessKey)
			}
		}
	}
	key := domain.ProjectKey(q.Domain, q.Project)
	if _, done := l.projects[key]; !done {
		l.projects[key] = nil
		switch p, err := l.s.Tenancy.GetProject(l.ctx, q.Domain, q.Project); {
		case absent(err) != nil:
			l.err = err
		case err == nil:
			l.projects[key] = p.TotalResourceSlots
		}
	}
	if _, done := l.domains[q.Domain]; !done {
		l.domains[q.Domain] = nil
		switch d, err := l.s.Tenancy.GetDomain(l.ctx, q.Domain); {
		case absent(err) != nil:
			l.err = err
		case err == nil:
			l.domains[q.Domain] = d.TotalResourceSlots
		}
	}
}

// policyOf reads (once) the policy of the keypair with the access key.
func (l *readLimits) policyOf(accessKey string) *domain.KeypairPolicySpec {
	if p, done := l.policies[accessKey]; done || l.err != nil {
		return p
	}
	l.policies[accessKey] = nil
	kp, err := l.s.Tenancy.GetKeypair(l.ctx, accessKey)
	if err != nil {
		l.err = absent(err)
		return nil
	}
	p, err := l.s.Tenancy.GetKeypairPolicy(l.ctx, kp.ResourcePolicy)
	if err != nil {
		l.err = absent(err)
		return nil
	}
	l.policies[accessKey] = &p.KeypairPolicySpec
	return &p.KeypairPolicySpec
}

// KeypairPolicy implements quota.LimitSource.
func (l *readLimits) KeypairPolicy(accessKey string) (domain.KeypairPolicySpec, bool) {
	if p := l.policies[accessKey]; p != nil {
		return *p, true
	}
	return domain.KeypairPolicySpec{}, false
}

// Of implements quota.LimitSource as quota.Limits.Of does.
func (l *readLimits) Of(scope quota.Scope, key string) (quota.Limit, bool) {
	switch scope {
	case quota.ScopeKeypair:
		if p := l.policies[key]; p != nil {
			return quota.KeypairLimit(*p), true
		}
	case quota.ScopeUser:
		if p := l.users[key]; p != nil {
			return quota.KeypairLimit(*p), true
		}
	case quota.ScopeProject:
		if s := l.projects[key]; len(s) > 0 {
			return quota.TotalLimit(s), true
		}
	case quota.ScopeDomain:
		if s := l.domains[key]; len(s) > 0 {
			return quota.TotalLimit(s), true
		}
	}
	return quota.Limit{}, false
}
