package placement

import (
	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// Result is the outcome of one round: every session of the input is in
// exactly one of Placed and Unplaced, each in the order it was decided.
type Result struct {
	Placed   []Placement
	Unplaced []Unplaced
	// RoundRobinNext is, for each resource group with the roundrobin
	// selector, where its next round starts (ResourceGroup.RoundRobinNext).
	// Ungrouped rounds use the key Input.Ungrouped.Name.
	RoundRobinNext map[string]int
	// Order is every session of the input in the order the round decided
	// it: sessions no group takes first, then priority levels from the
	// highest, each group's sessions of a level in the group's order (for
	// drf, as the dominant shares moved during the round). It is the
	// queue as the scheduler walks it, for explanations.
	Order []uuid.UUID
}

// Placement is where every kernel of one session goes: the agent and
// exactly which devices with which amounts (a whole device or a MIG device
// is 1; cuda.shares are the shares taken on each GPU), devices sorted by
// id, kernels in session order.
type Placement struct {
	SessionID uuid.UUID
	Kernels   []domain.KernelPlacement
}

// Unplaced is a session left PENDING, with every check it failed.
type Unplaced struct {
	SessionID uuid.UUID
	// Reason is the status reason: predicate-checks-failed when a check on
	// the session itself failed (request, starts_at, dependencies, group,
	// concurrency, quotas), no-available-instances otherwise.
	Reason   string
	Failures []Failure
	// Tried is false for a session that was not tried because an earlier
	// one blocks its fifo queue: it does not count as a failed try.
	Tried bool
}

// Details returns the failures' messages, for the session's status data.
// They name requested amounts and limits, never the free amounts of the
// moment, so a session waiting for the same reasons gets the same details.
func (u Unplaced) Details() []string {
	out := make([]string, len(u.Failures))
	for i, f := range u.Failures {
		out[i] = f.Message
	}
	return out
}

// Check names a failed check. Append-only.
type Check uint8

const (
	// CheckRequest: the request itself is invalid (e.g. cuda.device and
	// cuda.shares together).
	CheckRequest Check = iota
	// CheckStartsAt: starts_at is not reached.
	CheckStartsAt
	// CheckDependency: a dependency has not finished successfully.
	CheckDependency
	// CheckResourceGroup: the group is unknown, inactive or not allowed.
	CheckResourceGroup
	// CheckConcurrency: the keypair's max_concurrent_sessions is reached.
	CheckConcurrency
	// CheckKeypairQuota, CheckUserQuota, CheckProjectQuota and
	// CheckDomainQuota: a slot limit would be exceeded (Slot names it).
	CheckKeypairQuota
	CheckUserQuota
	CheckProjectQuota
	CheckDomainQuota
	// CheckArchitecture: no schedulable agent of the architecture in the
	// group.
	CheckArchitecture
	// CheckCapacity: no agent has room; Message explains what is short.
	CheckCapacity
	// CheckBlocked: an earlier session blocks the fifo queue (Session names
	// it).
	CheckBlocked
)

var checkNames = [...]string{"request", "starts-at", "dependency", "resource-group", "concurrency",
	"keypair-quota", "user-quota", "project-quota", "domain-quota", "architecture", "capacity", "blocked"}

func (c Check) String() string {
	if int(c) < len(checkNames) {
		return checkNames[c]
	}
	return "check"
}

// predicate reports whether the check is about the session itself rather
// than about room on the agents.
func (c Check) predicate() bool {
	return c <= CheckDomainQuota
}

// Failure is one failed check.
type Failure struct {
	Check Check
	// Subject is what the check is about: the access key, user, project or
	// domain of a quota, the resource group, the architecture.
	Subject string
	// Slot is the slot of a quota or capacity failure, when one is named.
	Slot domain.SlotName
	// Session is the dependency, or the session blocking the queue.
	Session uuid.UUID
	// Message says it for people.
	Message string
}
