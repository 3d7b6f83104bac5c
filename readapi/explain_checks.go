package readapi

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/cairnhq/cairn/projections/sessions"
)

// Codes of the checks an explanation reports (checkView.Code): stable,
// for pages and scripts to branch on. Append-only.
const (
	CodeInvalidRequest      = "invalid-request"
	CodeStartsAt            = "starts-at"
	CodeDependency          = "dependency"
	CodeResourceGroup       = "resource-group"
	CodeKeypairConcurrency  = "keypair-concurrency"
	CodeKeypairQuota        = "keypair-quota"
	CodeUserQuota           = "user-quota"
	CodeProjectQuota        = "project-quota"
	CodeDomainQuota         = "domain-quota"
	CodeArchitecture        = "architecture"
	CodeNoAgent             = "no-agent"
	CodeCapacityFragmented  = "capacity-fragmented"
	CodeCapacityInsufficent = "capacity-insufficient"
	CodeCapacityTooLarge    = "capacity-exceeds-agents"
	CodeCapacity            = "capacity"
	CodeQueueBlocked        = "queue-blocked"
)

// checkView is one reason a session is not placed now: a stable code, the
// scheduler's check, a sentence for people and, where they apply, the
// numbers behind it (amounts as decimals, bytes as bytes).
type checkView struct {
	Code    string          `json:"code"`
	Check   string          `json:"check"`
	Message string          `json:"message"`
	Subject string          `json:"subject,omitempty"`
	Slot    domain.SlotName `json:"slot,omitempty"`
	// SessionID is the dependency, or the session ahead that blocks the
	// queue.
	SessionID *uuid.UUID `json:"session_id,omitempty"`
	Requested string     `json:"requested,omitempty"`
	// Used and Limit are a quota's occupancy and limit.
	Used  string `json:"used,omitempty"`
	Limit string `json:"limit,omitempty"`
	// LargestFree is the largest block one kernel could get now, on
	// LargestFreeAgent; FreeTotal all that is free, however split.
	LargestFree      string `json:"largest_free,omitempty"`
	LargestFreeAgent string `json:"largest_free_agent,omitempty"`
	FreeTotal        string `json:"free_total,omitempty"`
}

// checks explains why the round left the session unplaced: placement's
// failures, with the quotas' use against their limits, and the capacity
// failures replaced by what the agents' free amounts say (fragmented,
// not enough in total, larger than any agent).
func (r *round) checks(q sessions.Queued, u placement.Unplaced) []checkView {
	out := []checkView{}
	capacity := false
	for _, f := range u.Failures {
		switch f.Check {
		case placement.CheckCapacity, placement.CheckArchitecture:
			capacity = true
			continue
		}
		out = append(out, r.check(q, f))
	}
	if capacity {
		out = append(out, r.capacity(q, u)...)
	}
	return out
}

// check is one failure that is not about room on the agents.
func (r *round) check(q sessions.Queued, f placement.Failure) checkView {
	v := checkView{Check: f.Check.String(), Message: f.Message, Subject: f.Subject, Slot: f.Slot}
	if f.Session != uuid.Nil {
		id := f.Session
		v.SessionID = &id
	}
	quotas := r.in.Quotas
	switch f.Check {
	case placement.CheckRequest:
		v.Code = CodeInvalidRequest
	case placement.CheckStartsAt:
		v.Code = CodeStartsAt
	case placement.CheckDependency:
		v.Code = CodeDependency
	case placement.CheckResourceGroup:
		v.Code = CodeResourceGroup
	case placement.CheckBlocked:
		v.Code = CodeQueueBlocked
		if f.Session != uuid.Nil {
			v.Message = fmt.Sprintf("queue: waiting behind session %s, which is first in line (fifo) and waits for room", f.Session)
		}
	case placement.CheckConcurrency:
		v.Code = CodeKeypairConcurrency
		ku := quotas.Keypairs[f.Subject]
		v.Used, v.Limit = fmt.Sprint(ku.ConcurrentSessions), fmt.Sprint(ku.MaxConcurrentSessions)
		v.Message = fmt.Sprintf("keypair concurrency: %d of %d sessions running (keypair %s, max_concurrent_sessions)",
			ku.ConcurrentSessions, ku.MaxConcurrentSessions, f.Subject)
	case placement.CheckKeypairQuota:
		v.Code = CodeKeypairQuota
		r.quota(&v, q, "keypair", quotas.Keypairs[f.Subject].Usage)
	case placement.CheckUserQuota:
		v.Code = CodeUserQuota
		r.quota(&v, q, "user", quotas.Users[f.Subject])
	case placement.CheckProjectQuota:
		v.Code = CodeProjectQuota
		r.quota(&v, q, "project", quotas.Projects[f.Subject])
	case placement.CheckDomainQuota:
		v.Code = CodeDomainQuota
		r.quota(&v, q, "domain", quotas.Domains[f.Subject])
	default:
		v.Code = f.Check.String()
	}
	return v
}

// quota fills in a slot limit's use: "project quota: 4 of 4 GPUs in use".
func (r *round) quota(v *checkView, q sessions.Queued, level string, u placement.Usage) {
	limit, ok := u.Limits[v.Slot]
	if !ok && u.Unspecified != placement.UnspecifiedLimited {
		return // the scheduler's own sentence stands
	}
	used, want := u.Occupied[v.Slot], q.RequestedSlots[v.Slot]
	v.Used, v.Limit, v.Requested = used.String(), limit.String(), want.String()
	v.Message = fmt.Sprintf("%s quota: %s of %s in use (%s %s, requested %s)", level,
		domain.FormatAmount(v.Slot, used), amountOf(v.Slot, limit), level, v.Subject, amountOf(v.Slot, want))
}

// capacity explains a lack of room from the agents' free amounts, slot
// by slot of what one agent must give at once (the whole session on one
// agent, or its largest kernel for multi-node).
func (r *round) capacity(q sessions.Queued, u placement.Unplaced) []checkView {
	var cands []agentRoom
	for _, room := range r.rooms {
		if room.schedulable && (q.Architecture == "" || room.architecture == q.Architecture) {
			cands = append(cands, room)
		}
	}
	if len(cands) == 0 {
		var out []checkView
		for _, f := range u.Failures {
			if f.Check == placement.CheckCapacity || f.Check == placement.CheckArchitecture {
				code := CodeNoAgent
				if f.Check == placement.CheckArchitecture {
					code = CodeArchitecture
				}
				out = append(out, checkView{Code: code, Check: f.Check.String(), Message: f.Message, Subject: f.Subject})
			}
		}
		return out
	}
	demand := demandOf(q)
	var out []checkView
	for _, slot := range demand.Names() {
		want := demand[slot]
		if want <= 0 {
			continue
		}
		var (
			best                  agentRoom
			largest, total, bound domain.Quantity
		)
		for _, room := range cands {
			b := room.block(slot)
			if slot == domain.SlotCUDAShares && want > domain.DeviceShareCapacity {
				b = room.total(slot) // more than one GPU is split over the agent's GPUs
			}
			if b > largest || (b == largest && (best.id == "" || room.id < best.id)) {
				best, largest = room, b
			}
			total += room.total(slot)
			bound = max(bound, room.biggest(slot))
			if slot == domain.SlotCUDAShares && want > domain.DeviceShareCapacity {
				bound = max(bound, domain.Units(int64(len(room.devices[domain.SlotCUDADevice]))))
			}
		}
		if largest >= want {
			continue
		}
		v := checkView{Check: placement.CheckCapacity.String(), Slot: slot, Requested: want.String(),
			LargestFree: largest.String(), LargestFreeAgent: best.id, FreeTotal: total.String()}
		switch {
		case bound < want:
			v.Code = CodeCapacityTooLarge
			v.Message = fmt.Sprintf("too large: requested %s, more than any agent has (the largest offers %s)",
				amountOf(slot, want), amountOf(slot, bound))
		case total >= want:
			v.Code = CodeCapacityFragmented
			v.Message = fmt.Sprintf("fragmented: largest free block %s on %s (requested %s; %s free in total over %d agents)",
				amountOf(slot, largest), best.id, amountOf(slot, want), amountOf(slot, total), len(cands))
		default:
			v.Code = CodeCapacityInsufficent
			v.Message = fmt.Sprintf("not enough in the whole cluster: %s free in total, requested %s",
				amountOf(slot, total), amountOf(slot, want))
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		// Every slot fits somewhere, but not together on one agent:
		// placement's own sentence says so.
		for _, f := range u.Failures {
			if f.Check == placement.CheckCapacity || f.Check == placement.CheckArchitecture {
				out = append(out, checkView{Code: CodeCapacity, Check: f.Check.String(), Message: f.Message, Subject: f.Subject, Slot: f.Slot})
			}
		}
	}
	return out
}

// demandOf is what one agent must hold at once: every kernel of a
// single-node session, the largest kernel slot by slot of a multi-node one.
func demandOf(q sessions.Queued) domain.Slots {
	if q.ClusterMode != domain.ClusterMultiNode {
		return q.RequestedSlots
	}
	out := domain.Slots{}
	for _, k := range q.Kernels {
		for slot, v := range k.RequestedSlots {
			out[slot] = max(out[slot], v)
		}
	}
	return out
}

// amountOf says an amount of a slot in words: "0.5 GPU", "2 GPUs",
// "4 CPUs", "8G memory".
func amountOf(slot domain.SlotName, q domain.Quantity) string {
	n := domain.FormatAmount(slot, q)
	unit := func(one, many string) string {
		if q == domain.Units(1) {
			return one
		}
		return many
	}
	switch {
	case slot == domain.SlotCUDAShares:
		return n + " GPU"
	case slot == domain.SlotCUDADevice:
		return n + unit(" GPU", " GPUs")
	case slot == domain.SlotCPU:
		return n + unit(" CPU", " CPUs")
	case slot == domain.SlotMem:
		return n + " memory"
	case domain.IsMIGSlot(slot):
		profile := strings.TrimSuffix(strings.TrimPrefix(string(slot), "cuda.device:"), "-mig")
		return n + " MIG " + profile + unit(" device", " devices")
	}
	return n + " " + string(slot)
}

// estimate is when the session may start, only where there is a basis:
// now when it fits now, its starts_at when that is all it waits for;
// otherwise nil with the reason no estimate is given.
func (r *round) estimate(q sessions.Queued, u placement.Unplaced, placed bool) (*time.Time, string) {
	if placed {
		now := r.now
		return &now, "it fits now: the scheduler places it at its next round"
	}
	only := len(u.Failures) > 0
	for _, f := range u.Failures {
		only = only && f.Check == placement.CheckStartsAt
	}
	if only {
		at := q.StartsAt
		return &at, "its starts_at: everything else it needs is free now"
	}
	return nil, "no basis: running sessions declare no end time, so when room or quota frees up is unknown"
}
