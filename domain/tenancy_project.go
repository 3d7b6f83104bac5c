package domain

import (
	"sort"
	"time"

	"github.com/google/uuid"
)

// ProjectSpec is what a project is created with.
type ProjectSpec struct {
	Domain      string
	Name        string
	Description string
	// TotalResourceSlots caps what the project's sessions may occupy at
	// once; a slot it does not name is unlimited.
	TotalResourceSlots  Slots
	AllowedVFolderHosts VFolderHosts
	// ResourcePolicy names the project resource policy (folder count and
	// quota); empty for none.
	ResourcePolicy string
}

// ProjectChanges are the fields a modification sets; nil leaves a field
// as it is.
type ProjectChanges struct {
	Description         *string
	TotalResourceSlots  *Slots
	AllowedVFolderHosts *VFolderHosts
	ResourcePolicy      *string
	IsActive            *bool
}

// Project is the project aggregate (stream project-<domain>/<name>): a
// group of users of one domain with its own limits. Its stream owns its
// membership: the projects a user belongs to are read from the members of
// projects, never recorded on the user. The zero Project does not exist.
type Project struct {
	stateOf
	domainName  string
	name        string
	description string
	totalSlots  Slots
	hosts       VFolderHosts
	policy      string
	active      bool
	members     map[uuid.UUID]bool
	createdAt   time.Time
	modifiedAt  time.Time
}

func (p *Project) Domain() string                    { return p.domainName }
func (p *Project) Name() string                      { return p.name }
func (p *Project) Description() string               { return p.description }
func (p *Project) TotalResourceSlots() Slots         { return p.totalSlots.Clone() }
func (p *Project) AllowedVFolderHosts() VFolderHosts { return p.hosts.Clone() }
func (p *Project) ResourcePolicy() string            { return p.policy }
func (p *Project) IsActive() bool                    { return p.active }
func (p *Project) CreatedAt() time.Time              { return p.createdAt }
func (p *Project) ModifiedAt() time.Time             { return p.modifiedAt }

// IsMember reports whether the user belongs to the project.
func (p *Project) IsMember(user uuid.UUID) bool { return p.members[user] }

// Members returns the members' ids, sorted.
func (p *Project) Members() []uuid.UUID {
	out := make([]uuid.UUID, 0, len(p.members))
	for id := range p.members {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// RehydrateProject folds a project stream's events, in revision order
// from 0. No events gives a project that does not exist.
func RehydrateProject(events []RecordedEvent) (*Project, error) {
	p := &Project{stateOf: stateOf{revision: -1}, members: map[uuid.UUID]bool{}}
	if err := fold("project.rehydrate", events, p); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Project) apply(ev Event) error {
	if _, first := ev.(ProjectCreated); first == p.exists {
		if first {
			return createdTwice("project")
		}
		return eventBeforeCreation("project")
	}
	switch e := ev.(type) {
	case ProjectCreated:
		p.exists, p.active = true, true
		p.domainName, p.name, p.description = e.Domain, e.Name, e.Description
		p.totalSlots, p.hosts, p.policy = e.TotalResourceSlots.Clone(), e.AllowedVFolderHosts.Clone(), e.ResourcePolicy
		p.createdAt, p.modifiedAt = e.At, e.At
	case ProjectModified:
		p.description = e.Description
		p.totalSlots, p.hosts, p.policy = e.TotalResourceSlots.Clone(), e.AllowedVFolderHosts.Clone(), e.ResourcePolicy
		p.modifiedAt = e.At
	case ProjectActivated:
		p.active, p.modifiedAt = true, e.At
	case ProjectDeactivated:
		p.active, p.modifiedAt = false, e.At
	case ProjectMemberAdded:
		p.members[e.UserID] = true
	case ProjectMemberRemoved:
		delete(p.members, e.UserID)
	default:
		return foreignEvent(ev, "project")
	}
	return nil
}

// Create records a new project, active and without members. The domain's
// existence is the caller's to check (another stream); an existing
// project of that name in the domain is KindConflict.
func (p *Project) Create(spec ProjectSpec, at time.Time) ([]Event, error) {
	const op = "project.create"
	pr := &problems{op: op}
	pr.checkName("domain", spec.Domain)
	pr.checkName("name", spec.Name)
	pr.checkDescription("description", spec.Description)
	slots := pr.slotLimits("total_resource_slots", spec.TotalResourceSlots)
	hosts := pr.vfolderHosts("allowed_vfolder_hosts", spec.AllowedVFolderHosts)
	pr.checkOptionalName("resource_policy", spec.ResourcePolicy)
	pr.checkAt(at)
	if err := pr.err(); err != nil {
		return nil, err
	}
	if p.exists {
		return nil, alreadyExists(op, "project")
	}
	return []Event{ProjectCreated{
		Domain: spec.Domain, Name: spec.Name, Description: spec.Description,
		TotalResourceSlots: slots, AllowedVFolderHosts: hosts, ResourcePolicy: spec.ResourcePolicy, At: at,
	}}, nil
}

// Modify applies the changes: project.modified with the resulting
// settings when any of them changes, project.activated or
// project.deactivated when is_active does.
func (p *Project) Modify(ch ProjectChanges, at time.Time) ([]Event, error) {
	const op = "project.modify"
	pr := &problems{op: op}
	next := ProjectModified{Description: p.description, TotalResourceSlots: p.totalSlots.Clone(),
		AllowedVFolderHosts: p.hosts.Clone(), ResourcePolicy: p.policy, At: at}
	if ch.Description != nil {
		pr.checkDescription("description", *ch.Description)
		next.Description = *ch.Description
	}
	if ch.TotalResourceSlots != nil {
		next.TotalResourceSlots = pr.slotLimits("total_resource_slots", *ch.TotalResourceSlots)
	}
	if ch.AllowedVFolderHosts != nil {
		next.AllowedVFolderHosts = pr.vfolderHosts("allowed_vfolder_hosts", *ch.AllowedVFolderHosts)
	}
	if ch.ResourcePolicy != nil {
		pr.checkOptionalName("resource_policy", *ch.ResourcePolicy)
		next.ResourcePolicy = *ch.ResourcePolicy
	}
	pr.checkAt(at)
	if err := pr.err(); err != nil {
		return nil, err
	}
	if !p.exists {
		return nil, NotFound(op, "project")
	}
	var events []Event
	if next.Description != p.description || next.ResourcePolicy != p.policy ||
		!sameLimits(next.TotalResourceSlots, p.totalSlots) || !next.AllowedVFolderHosts.Equal(p.hosts) {
		events = append(events, next)
	}
	events = append(events, activation(ch.IsActive, p.active, ProjectActivated{At: at}, ProjectDeactivated{At: at})...)
	return events, nil
}

// AddMember makes the user a member. The user's existence and domain are
// the caller's to check (another stream); adding a member again returns
// no events.
func (p *Project) AddMember(user uuid.UUID, at time.Time) ([]Event, error) {
	const op = "project.add-member"
	if err := p.checkMemberInput(op, user, at); err != nil {
		return nil, err
	}
	if p.members[user] {
		return nil, nil
	}
	return []Event{ProjectMemberAdded{UserID: user, At: at}}, nil
}

// RemoveMember ends the user's membership; removing a non-member returns
// no events.
func (p *Project) RemoveMember(user uuid.UUID, at time.Time) ([]Event, error) {
	const op = "project.remove-member"
	if err := p.checkMemberInput(op, user, at); err != nil {
		return nil, err
	}
	if !p.members[user] {
		return nil, nil
	}
	return []Event{ProjectMemberRemoved{UserID: user, At: at}}, nil
}

func (p *Project) checkMemberInput(op string, user uuid.UUID, at time.Time) error {
	pr := &problems{op: op}
	if user == uuid.Nil {
		pr.bad("user_id", "required")
	}
	pr.checkAt(at)
	if err := pr.err(); err != nil {
		return err
	}
	if !p.exists {
		return NotFound(op, "project")
	}
	return nil
}
