package domain

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// SchedulerOrder is the order in which a resource group's pending
// sessions are tried.
type SchedulerOrder string

const (
	OrderFIFO SchedulerOrder = "fifo"
	OrderLIFO SchedulerOrder = "lifo"
	OrderDRF  SchedulerOrder = "drf"
)

// AgentSelector chooses among the agents a session fits on.
type AgentSelector string

const (
	SelectorDispersed    AgentSelector = "dispersed"
	SelectorConcentrated AgentSelector = "concentrated"
	SelectorRoundRobin   AgentSelector = "roundrobin"
	SelectorLegacy       AgentSelector = "legacy"
)

// maxFIFOSkipAfter bounds fifo_skip_after.
const maxFIFOSkipAfter = 1_000_000

// ResourceGroupSpec is a resource group's settings.
type ResourceGroupSpec struct {
	Description string `json:"description"`
	IsActive    bool   `json:"is_active"`
	// IsPublic groups are listed to the users who may use them; private
	// ones are used only when a request names them.
	IsPublic bool `json:"is_public"`
	// AllowedSessionTypes defaults to interactive and batch.
	AllowedSessionTypes []SessionType `json:"allowed_session_types"`
	// PendingTimeout (seconds, 0 = never) cancels sessions pending longer.
	PendingTimeout int64          `json:"pending_timeout"`
	SchedulerOrder SchedulerOrder `json:"scheduler"`
	AgentSelector  AgentSelector  `json:"agent_selector"`
	// AllowFractionalFragmentation lets a fractional GPU request be spread
	// over several devices.
	AllowFractionalFragmentation bool `json:"allow_fractional_resource_fragmentation"`
	// FIFOSkipAfter (fifo order only) moves past a session that failed this
	// many scheduling tries, so one big request does not block the queue;
	// 0 never skips.
	FIFOSkipAfter int `json:"fifo_skip_after"`
}

func (s ResourceGroupSpec) clone() ResourceGroupSpec {
	s.AllowedSessionTypes = append([]SessionType{}, s.AllowedSessionTypes...)
	return s
}

func (s ResourceGroupSpec) equal(o ResourceGroupSpec) bool {
	return s.Description == o.Description && s.IsActive == o.IsActive && s.IsPublic == o.IsPublic &&
		slices.Equal(s.AllowedSessionTypes, o.AllowedSessionTypes) && s.PendingTimeout == o.PendingTimeout &&
		s.SchedulerOrder == o.SchedulerOrder && s.AgentSelector == o.AgentSelector &&
		s.AllowFractionalFragmentation == o.AllowFractionalFragmentation && s.FIFOSkipAfter == o.FIFOSkipAfter
}

var sessionTypeOrder = []SessionType{SessionInteractive, SessionBatch, SessionInference}

// normalized validates the spec and returns it with its defaults (fifo,
// dispersed, interactive and batch) and the session types in canonical
// order.
func (s ResourceGroupSpec) normalized(p *problems) ResourceGroupSpec {
	out := s.clone()
	p.checkDescription("description", s.Description)
	if len(s.AllowedSessionTypes) == 0 {
		out.AllowedSessionTypes = []SessionType{SessionInteractive, SessionBatch}
	} else {
		out.AllowedSessionTypes = []SessionType{}
		for _, t := range s.AllowedSessionTypes {
			if !slices.Contains(sessionTypeOrder, t) {
				p.bad("allowed_session_types", "unknown session type %q (interactive, batch, inference)", t)
			}
		}
		for _, t := range sessionTypeOrder {
			if slices.Contains(s.AllowedSessionTypes, t) {
				out.AllowedSessionTypes = append(out.AllowedSessionTypes, t)
			}
		}
	}
	p.checkSeconds("pending_timeout", s.PendingTimeout)
	switch s.SchedulerOrder {
	case "":
		out.SchedulerOrder = OrderFIFO
	case OrderFIFO, OrderLIFO, OrderDRF:
	default:
		p.bad("scheduler", "unknown scheduling order %q (fifo, lifo, drf)", s.SchedulerOrder)
	}
	switch s.AgentSelector {
	case "":
		out.AgentSelector = SelectorDispersed
	case SelectorDispersed, SelectorConcentrated, SelectorRoundRobin, SelectorLegacy:
	default:
		p.bad("agent_selector", "unknown agent selector %q (dispersed, concentrated, roundrobin, legacy)", s.AgentSelector)
	}
	if s.FIFOSkipAfter < 0 || s.FIFOSkipAfter > maxFIFOSkipAfter {
		p.bad("fifo_skip_after", "must be between 0 (never) and %d, not %d", maxFIFOSkipAfter, s.FIFOSkipAfter)
	}
	return out
}

// ResourceGroupChanges are the fields a modification sets; nil leaves a
// field as it is.
type ResourceGroupChanges struct {
	Description                  *string
	IsActive                     *bool
	IsPublic                     *bool
	AllowedSessionTypes          *[]SessionType
	PendingTimeout               *int64
	SchedulerOrder               *SchedulerOrder
	AgentSelector                *AgentSelector
	AllowFractionalFragmentation *bool
	FIFOSkipAfter                *int
}

// GranteeKind is what a resource group's access is granted to.
type GranteeKind string

const (
	GranteeDomain  GranteeKind = "domain"
	GranteeProject GranteeKind = "project"
	GranteeKeypair GranteeKind = "keypair"
)

// Grantee is one entry of a resource group's access list: a domain (by
// name), a project ("<domain>/<name>") or a keypair (by access key).
type Grantee struct {
	Kind GranteeKind `json:"kind"`
	Name string      `json:"name"`
}

// ProjectKey is how a project is named across domains: "<domain>/<name>".
func ProjectKey(domainName, project string) string { return domainName + "/" + project }

// SplitProjectKey splits "<domain>/<name>".
func SplitProjectKey(key string) (domainName, project string, ok bool) {
	domainName, project, ok = strings.Cut(key, "/")
	return domainName, project, ok && domainName != "" && project != ""
}

// Check validates a grantee.
func (g Grantee) Check(op string) error {
	p := &problems{op: op}
	switch g.Kind {
	case GranteeDomain:
		p.checkName("grantee.name", g.Name)
	case GranteeProject:
		d, n, ok := SplitProjectKey(g.Name)
		if !ok {
			p.bad("grantee.name", "a project is named <domain>/<project>")
		} else {
			p.checkName("grantee.name", d)
			p.checkName("grantee.name", n)
		}
	case GranteeKeypair:
		p.checkAccessKey("grantee.name", g.Name)
	default:
		p.bad("grantee.kind", "unknown grantee kind %q (domain, project, keypair)", g.Kind)
	}
	return p.err()
}

// ResourceGroup is the resource group aggregate (stream
// resource-group-<name>): a named partition of agents, its scheduling
// settings and who may use it. The zero ResourceGroup does not exist.
type ResourceGroup struct {
	stateOf
	name       string
	spec       ResourceGroupSpec
	access     map[Grantee]bool
	createdAt  time.Time
	modifiedAt time.Time
}

func (r *ResourceGroup) Name() string             { return r.name }
func (r *ResourceGroup) Spec() ResourceGroupSpec  { return r.spec.clone() }
func (r *ResourceGroup) IsActive() bool           { return r.spec.IsActive }
func (r *ResourceGroup) CreatedAt() time.Time     { return r.createdAt }
func (r *ResourceGroup) ModifiedAt() time.Time    { return r.modifiedAt }
func (r *ResourceGroup) HasAccess(g Grantee) bool { return r.access[g] }

// AccessList returns the grantees, by kind then name.
func (r *ResourceGroup) AccessList() []Grantee { return sortedGrantees(r.access) }

func (r *ResourceGroup) allowsType(t SessionType) bool {
	return slices.Contains(r.spec.AllowedSessionTypes, t)
}

func sortedGrantees(m map[Grantee]bool) []Grantee {
	out := make([]Grantee, 0, len(m))
	for g := range m {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// MayUse reports whether a session of the given type, domain, project and
// access key may go to the group: it is active, allows the type, and its
// access list names the domain, the project or the keypair.
func (r *ResourceGroup) MayUse(t SessionType, domainName, project, accessKey string) bool {
	if !r.exists || !r.spec.IsActive || !r.allowsType(t) {
		return false
	}
	return r.access[Grantee{GranteeDomain, domainName}] ||
		r.access[Grantee{GranteeProject, ProjectKey(domainName, project)}] ||
		r.access[Grantee{GranteeKeypair, accessKey}]
}

// RehydrateResourceGroup folds a resource group stream's events.
func RehydrateResourceGroup(events []RecordedEvent) (*ResourceGroup, error) {
	r := &ResourceGroup{stateOf: stateOf{revision: -1}, access: map[Grantee]bool{}}
	if err := fold("resource-group.rehydrate", events, r); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *ResourceGroup) apply(ev Event) error {
	if _, first := ev.(ResourceGroupCreated); first == r.exists {
		if first {
			return createdTwice("resource group")
		}
		return eventBeforeCreation("resource group")
	}
	switch e := ev.(type) {
	case ResourceGroupCreated:
		r.exists, r.name, r.spec, r.createdAt, r.modifiedAt = true, e.Name, e.ResourceGroupSpec.clone(), e.At, e.At
	case ResourceGroupModified:
		r.spec, r.modifiedAt = e.ResourceGroupSpec.clone(), e.At
	case ResourceGroupAccessGranted:
		r.access[e.Grantee] = true
	case ResourceGroupAccessRevoked:
		delete(r.access, e.Grantee)
	default:
		return foreignEvent(ev, "resource group")
	}
	return nil
}

// Create records a new resource group, active, with an empty access list
// (spec.IsActive is ignored: a group is created active). An existing one
// of that name is KindConflict.
func (r *ResourceGroup) Create(name string, spec ResourceGroupSpec, at time.Time) ([]Event, error) {
	const op = "resource-group.create"
	p := &problems{op: op}
	p.checkName("name", name)
	spec = spec.normalized(p)
	spec.IsActive = true
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if r.exists {
		return nil, alreadyExists(op, "resource group")
	}
	return []Event{ResourceGroupCreated{Name: name, ResourceGroupSpec: spec, At: at}}, nil
}

// Modify applies the changes: resource-group.modified with every setting
// when any changes.
func (r *ResourceGroup) Modify(ch ResourceGroupChanges, at time.Time) ([]Event, error) {
	const op = "resource-group.modify"
	p := &problems{op: op}
	next := r.spec.clone()
	set(&next.Description, ch.Description)
	set(&next.IsActive, ch.IsActive)
	set(&next.IsPublic, ch.IsPublic)
	set(&next.AllowedSessionTypes, ch.AllowedSessionTypes)
	set(&next.PendingTimeout, ch.PendingTimeout)
	set(&next.SchedulerOrder, ch.SchedulerOrder)
	set(&next.AgentSelector, ch.AgentSelector)
	set(&next.AllowFractionalFragmentation, ch.AllowFractionalFragmentation)
	set(&next.FIFOSkipAfter, ch.FIFOSkipAfter)
	next = next.normalized(p)
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if !r.exists {
		return nil, NotFound(op, "resource group")
	}
	if next.equal(r.spec) {
		return nil, nil
	}
	return []Event{ResourceGroupModified{ResourceGroupSpec: next, At: at}}, nil
}

// Grant adds the grantee to the access list. Whether it exists is the
// caller's to check (another stream); granting again returns no events.
func (r *ResourceGroup) Grant(g Grantee, at time.Time) ([]Event, error) {
	const op = "resource-group.grant"
	if err := r.checkGrant(op, g, at); err != nil {
		return nil, err
	}
	if r.access[g] {
		return nil, nil
	}
	return []Event{ResourceGroupAccessGranted{Grantee: g, At: at}}, nil
}

// Revoke removes the grantee from the access list; revoking what was not
// granted returns no events.
func (r *ResourceGroup) Revoke(g Grantee, at time.Time) ([]Event, error) {
	const op = "resource-group.revoke"
	if err := r.checkGrant(op, g, at); err != nil {
		return nil, err
	}
	if !r.access[g] {
		return nil, nil
	}
	return []Event{ResourceGroupAccessRevoked{Grantee: g, At: at}}, nil
}

func (r *ResourceGroup) checkGrant(op string, g Grantee, at time.Time) error {
	if err := g.Check(op); err != nil {
		return err
	}
	if at.IsZero() {
		return Invalid(op, "at", "must be set")
	}
	if !r.exists {
		return NotFound(op, "resource group")
	}
	return nil
}
