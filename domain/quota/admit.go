package quota

import (
	"errors"
	"fmt"

	"github.com/cairnhq/cairn/domain"
)

// Standing is what is known, when a session is requested, of the limits
// that apply to it and of its keypair's queue. A nil policy or total
// limits nothing.
type Standing struct {
	// Keypair is the policy of the keypair the request was made with.
	Keypair *domain.KeypairPolicySpec
	// User is the policy of the user's main keypair.
	User *domain.KeypairPolicySpec
	// Project and Domain are their total_resource_slots.
	Project domain.Slots
	Domain  domain.Slots
	// Pending and PendingSlots are the keypair's pending sessions and
	// what they ask in total.
	Pending      int
	PendingSlots domain.Slots
}

// Exceeded is the cause of a refusal by Admit: which limit of whom.
// Reach it with errors.As.
type Exceeded struct {
	Scope   Scope
	Subject string
	// Limit is the policy field (max_pending_session_count, ...).
	Limit string
	// Slot is the slot over its limit, for slot limits.
	Slot    domain.SlotName
	Message string
}

func (e *Exceeded) Error() string { return e.Message }

// Admit refuses a session whose answer is already known when it is
// requested, reporting every problem at
// once (errors.Join; errors.Is matches each kind):
//   - more kernels than the keypair policy's max_containers_per_session:
//     KindInvalid on cluster_size, naming the limit;
//   - the keypair's pending sessions at max_pending_session_count, or
//     their slots plus this request over max_pending_session_resource_slots:
//     KindQuotaExceeded;
//   - a request that alone exceeds total_resource_slots of the keypair's
//     policy, of the user's main keypair's policy, of the project or of
//     the domain, which no amount of waiting would let in:
//     KindQuotaExceeded.
//
// KindQuotaExceeded errors carry an *Exceeded naming the limit.
// What depends on occupancy (concurrency, slot limits with what is held)
// is left to the scheduler, which knows it authoritatively.
func Admit(s Session, st Standing) error {
	const op = "session.request"
	var errs []error
	ak := s.Key(ScopeKeypair)
	exceeded := func(scope Scope, subject, limit string, slot domain.SlotName, format string, args ...any) {
		e := &Exceeded{Scope: scope, Subject: subject, Limit: limit, Slot: slot,
			Message: fmt.Sprintf("%s %s: ", scope, subject) + fmt.Sprintf(format, args...)}
		errs = append(errs, &domain.Error{Op: op, Kind: domain.KindQuotaExceeded, Err: e})
	}
	slotLimits := func(scope Scope, subject string, l Limit, limit string, occupied domain.Slots) {
		for _, over := range l.Over(occupied, s.Requested) {
			exceeded(scope, subject, limit, over.Slot, "%s %s limit %s exceeded (requested %s)", limit, over.Slot,
				domain.FormatAmount(over.Slot, over.Cap), domain.FormatAmount(over.Slot, over.Requested))
		}
	}
	if p := st.Keypair; p != nil {
		if p.MaxContainersPerSession > 0 && s.Kernels > p.MaxContainersPerSession {
			errs = append(errs, domain.Invalid(op, "cluster_size", "%d kernels exceed %s %d of keypair %s's resource policy",
				s.Kernels, LimitContainers, p.MaxContainersPerSession, ak))
		}
		if p.MaxPendingSessionCount > 0 && st.Pending >= p.MaxPendingSessionCount {
			exceeded(ScopeKeypair, ak, LimitPendingCount, "", "%s %d reached", LimitPendingCount, p.MaxPendingSessionCount)
		}
		slotLimits(ScopeKeypair, ak, PendingLimit(*p), LimitPendingSlots, st.PendingSlots)
		slotLimits(ScopeKeypair, ak, KeypairLimit(*p), LimitTotalSlots, nil)
	}
	if p := st.User; p != nil {
		slotLimits(ScopeUser, s.Key(ScopeUser), KeypairLimit(*p), LimitTotalSlots, nil)
	}
	if len(st.Project) > 0 {
		slotLimits(ScopeProject, s.Key(ScopeProject), TotalLimit(st.Project), LimitTotalSlots, nil)
	}
	if len(st.Domain) > 0 {
		slotLimits(ScopeDomain, s.Key(ScopeDomain), TotalLimit(st.Domain), LimitTotalSlots, nil)
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errors.Join(errs...)
}
