package placement

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairnhq/cairn/domain"
)

// predicates records every check of the session itself that fails: the
// request, starts_at, dependencies, the resource group, the keypair's
// concurrency, and the keypair, user, project and domain slot limits
// (occupied, plus what this round placed, plus the request must stay
// within each limit).
func (st *state) predicates(r *request) {
	s := r.s
	if r.invalid != "" {
		r.fail(Failure{Check: CheckRequest, Message: "invalid request: " + r.invalid})
	}
	if !s.StartsAt.IsZero() && st.now.Before(s.StartsAt) {
		r.fail(Failure{Check: CheckStartsAt, Message: fmt.Sprintf("starts_at %s is not reached", s.StartsAt.UTC().Format(time.RFC3339))})
	}
	deps := slices.Clone(s.Dependencies)
	slices.SortFunc(deps, func(a, b Dependency) int { return strings.Compare(a.SessionID.String(), b.SessionID.String()) })
	for _, d := range deps {
		var msg string
		switch d.State {
		case DependencySucceeded:
			continue
		case DependencyFailed:
			msg = "dependency %s did not finish successfully"
		case DependencyUnknown:
			msg = "dependency %s does not exist"
		default:
			msg = "dependency %s has not finished"
		}
		r.fail(Failure{Check: CheckDependency, Session: d.SessionID, Message: fmt.Sprintf(msg, d.SessionID)})
	}
	if r.groupFailure != "" {
		r.fail(Failure{Check: CheckResourceGroup, Subject: s.ResourceGroup, Message: r.groupFailure})
	}
	if r.invalid != "" {
		return // no amounts to check
	}
	qs := &st.quota
	if kp := qs.keypairs[s.AccessKey]; kp != nil && kp.maxConc > 0 && kp.conc >= kp.maxConc {
		r.fail(Failure{Check: CheckConcurrency, Subject: s.AccessKey,
			Message: fmt.Sprintf("keypair %s: max_concurrent_sessions %d reached", s.AccessKey, kp.maxConc)})
	}
	for _, q := range []struct {
		check   Check
		label   string
		name    string
		subject *subject
	}{
		{CheckKeypairQuota, "keypair", s.AccessKey, qs.keypairs[s.AccessKey]},
		{CheckUserQuota, "user", s.UserID, qs.users[s.UserID]},
		{CheckProjectQuota, "project", s.Project, qs.projects[s.Project]},
		{CheckDomainQuota, "domain", s.Domain, qs.domains[s.Domain]},
	} {
		if q.subject == nil {
			continue
		}
		for _, sa := range r.total {
			limit := q.subject.limit[sa.slot]
			if limit < 0 || q.subject.occ[sa.slot] <= limit-sa.amt {
				continue
			}
			name := st.slots.names[sa.slot]
			r.fail(Failure{Check: q.check, Subject: q.name, Slot: name, Message: fmt.Sprintf("%s %s: total_resource_slots %s limit %s exceeded (requested %s)",
				q.label, q.name, name, amount(name, limit), amount(name, sa.amt))})
		}
	}
}

// reason is the status reason of an unplaced session.
func (r *request) reason() string {
	for _, f := range r.failures {
		if f.Check.predicate() {
			return domain.ReasonPredicateChecks
		}
	}
	return domain.ReasonNoAvailableInstances
}

// passed reports whether no check of the session itself failed.
func (r *request) passed() bool { return r.reason() == domain.ReasonNoAvailableInstances }
