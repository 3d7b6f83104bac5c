package domain

import "time"

// DomainSpec is what a domain is created with.
type DomainSpec struct {
	Name        string
	Description string
	// TotalResourceSlots caps what all the domain's sessions may occupy at
	// once; a slot it does not name is unlimited.
	TotalResourceSlots  Slots
	AllowedVFolderHosts VFolderHosts
}

// DomainChanges are the fields a modification sets; nil leaves a field
// as it is.
type DomainChanges struct {
	Description         *string
	TotalResourceSlots  *Slots
	AllowedVFolderHosts *VFolderHosts
	IsActive            *bool
}

// Domain is the domain aggregate (stream domain-<name>): the top level of
// authority and resources. The zero Domain does not exist (revision -1).
type Domain struct {
	stateOf
	name        string
	description string
	totalSlots  Slots
	hosts       VFolderHosts
	active      bool
	createdAt   time.Time
	modifiedAt  time.Time
}

func (d *Domain) Name() string                      { return d.name }
func (d *Domain) Description() string               { return d.description }
func (d *Domain) TotalResourceSlots() Slots         { return d.totalSlots.Clone() }
func (d *Domain) AllowedVFolderHosts() VFolderHosts { return d.hosts.Clone() }
func (d *Domain) IsActive() bool                    { return d.active }
func (d *Domain) CreatedAt() time.Time              { return d.createdAt }
func (d *Domain) ModifiedAt() time.Time             { return d.modifiedAt }

// RehydrateDomain folds a domain stream's events, in revision order from
// 0. No events gives a domain that does not exist.
func RehydrateDomain(events []RecordedEvent) (*Domain, error) {
	d := &Domain{stateOf: stateOf{revision: -1}}
	if err := fold("domain.rehydrate", events, d); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Domain) apply(ev Event) error {
	if _, first := ev.(DomainCreated); first == d.exists {
		if first {
			return createdTwice("domain")
		}
		return eventBeforeCreation("domain")
	}
	switch e := ev.(type) {
	case DomainCreated:
		d.exists, d.active = true, true
		d.name, d.description = e.Name, e.Description
		d.totalSlots, d.hosts = e.TotalResourceSlots.Clone(), e.AllowedVFolderHosts.Clone()
		d.createdAt, d.modifiedAt = e.At, e.At
	case DomainModified:
		d.description = e.Description
		d.totalSlots, d.hosts = e.TotalResourceSlots.Clone(), e.AllowedVFolderHosts.Clone()
		d.modifiedAt = e.At
	case DomainActivated:
		d.active, d.modifiedAt = true, e.At
	case DomainDeactivated:
		d.active, d.modifiedAt = false, e.At
	default:
		return foreignEvent(ev, "domain")
	}
	return nil
}

// Create records a new domain, active. Every problem of the spec is
// reported at once; an existing domain of that name is KindConflict.
func (d *Domain) Create(spec DomainSpec, at time.Time) ([]Event, error) {
	const op = "domain.create"
	p := &problems{op: op}
	p.checkName("name", spec.Name)
	p.checkDescription("description", spec.Description)
	slots := p.slotLimits("total_resource_slots", spec.TotalResourceSlots)
	hosts := p.vfolderHosts("allowed_vfolder_hosts", spec.AllowedVFolderHosts)
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if d.exists {
		return nil, alreadyExists(op, "domain")
	}
	return []Event{DomainCreated{Name: spec.Name, Description: spec.Description, TotalResourceSlots: slots, AllowedVFolderHosts: hosts, At: at}}, nil
}

// Modify applies the changes: domain.modified with the resulting settings
// when any of them changes, domain.activated or domain.deactivated when
// is_active does. Changes that change nothing return no events.
func (d *Domain) Modify(ch DomainChanges, at time.Time) ([]Event, error) {
	const op = "domain.modify"
	p := &problems{op: op}
	next := DomainModified{Description: d.description, TotalResourceSlots: d.totalSlots.Clone(), AllowedVFolderHosts: d.hosts.Clone(), At: at}
	if ch.Description != nil {
		p.checkDescription("description", *ch.Description)
		next.Description = *ch.Description
	}
	if ch.TotalResourceSlots != nil {
		next.TotalResourceSlots = p.slotLimits("total_resource_slots", *ch.TotalResourceSlots)
	}
	if ch.AllowedVFolderHosts != nil {
		next.AllowedVFolderHosts = p.vfolderHosts("allowed_vfolder_hosts", *ch.AllowedVFolderHosts)
	}
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if !d.exists {
		return nil, NotFound(op, "domain")
	}
	var events []Event
	if next.Description != d.description || !sameLimits(next.TotalResourceSlots, d.totalSlots) || !next.AllowedVFolderHosts.Equal(d.hosts) {
		events = append(events, next)
	}
	events = append(events, activation(ch.IsActive, d.active, DomainActivated{At: at}, DomainDeactivated{At: at})...)
	return events, nil
}

// activation returns the event that moves is_active from current to
// *want, if it changes.
func activation(want *bool, current bool, activated, deactivated Event) []Event {
	switch {
	case want == nil || *want == current:
		return nil
	case *want:
		return []Event{activated}
	}
	return []Event{deactivated}
}

// RequireActive refuses to place new things (projects, users) in a domain
// that does not exist (KindNotFound) or is inactive (KindConflict).
func (d *Domain) RequireActive(op string) error {
	switch {
	case !d.exists:
		return NotFound(op, "domain")
	case !d.active:
		return Errorf(op, KindConflict, "domain %q is inactive", d.name)
	}
	return nil
}
