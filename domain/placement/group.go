package placement

import "fmt"

// Order is how a resource group orders its queue (after priority, which
// always comes first).
type Order string

const (
	// OrderFIFO: oldest first; a session that finds no room blocks the
	// ones behind it (see ResourceGroup.SkipAfterTries). The default.
	OrderFIFO Order = "fifo"
	// OrderLIFO: newest first; nothing blocks.
	OrderLIFO Order = "lifo"
	// OrderDRF: the access key with the lowest dominant share first, FIFO
	// within a key; nothing blocks.
	OrderDRF Order = "drf"
)

// Selector is how a resource group picks an agent among those that fit.
type Selector string

const (
	// SelectorDispersed: the agent with the most free capacity. The
	// default.
	SelectorDispersed Selector = "dispersed"
	// SelectorConcentrated: the agent with the least free capacity that
	// still fits (bin packing).
	SelectorConcentrated Selector = "concentrated"
	// SelectorRoundRobin: the next agent that fits after the last one
	// chosen, in agent-id order, from ResourceGroup.RoundRobinNext.
	SelectorRoundRobin Selector = "roundrobin"
	// SelectorLegacy: the largest agent (most capacity).
	SelectorLegacy Selector = "legacy"
)

// ResourceGroup is a named partition of agents and how it schedules.
type ResourceGroup struct {
	Name string
	// Inactive groups take no session.
	Inactive bool
	// Order defaults to fifo, Selector to dispersed.
	Order    Order
	Selector Selector
	// AllowFractionalFragmentation lets a cuda.shares request larger than
	// one device split over devices in any amounts that fit, not only in
	// near-equal parts.
	AllowFractionalFragmentation bool
	// SkipAfterTries: under fifo, a session that has already failed this
	// many tries no longer blocks the sessions behind it. 0 never skips.
	SkipAfterTries int
	// RoundRobinNext is where the roundrobin selector starts: an index into
	// the group's agents sorted by id (every agent of the group, schedulable
	// or not). Result.RoundRobinNext gives the next round's.
	RoundRobinNext int
	// Access says who may use the group; nil lets everyone in.
	Access *Access
}

// Access lists who may use a resource group: a session may when its
// domain, its project or its access key is listed.
type Access struct {
	Domains    []string
	Projects   []string
	AccessKeys []string
}

func (g ResourceGroup) normalized() (ResourceGroup, error) {
	switch g.Order {
	case "":
		g.Order = OrderFIFO
	case OrderFIFO, OrderLIFO, OrderDRF:
	default:
		return g, fmt.Errorf("resource group %q: unknown order %q (fifo, lifo, drf)", g.Name, g.Order)
	}
	switch g.Selector {
	case "":
		g.Selector = SelectorDispersed
	case SelectorDispersed, SelectorConcentrated, SelectorRoundRobin, SelectorLegacy:
	default:
		return g, fmt.Errorf("resource group %q: unknown selector %q (dispersed, concentrated, roundrobin, legacy)", g.Name, g.Selector)
	}
	if g.RoundRobinNext < 0 {
		return g, fmt.Errorf("resource group %q: round-robin index %d must not be negative", g.Name, g.RoundRobinNext)
	}
	if g.SkipAfterTries < 0 {
		return g, fmt.Errorf("resource group %q: skip after tries %d must not be negative", g.Name, g.SkipAfterTries)
	}
	return g, nil
}

func (a *Access) allows(s *Session) bool {
	if a == nil {
		return true
	}
	return contains(a.Domains, s.Domain) || contains(a.Projects, s.Project) || contains(a.AccessKeys, s.AccessKey)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
