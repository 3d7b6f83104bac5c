// Package readmodels knows every read model of Cairn: it opens the event
// store with the read models' database beside it, and lists the
// projections by name, for the server (which runs them) and for
// `cairn replay rebuild` (which rebuilds them from position 0).
package readmodels

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/agents"
	"github.com/cairnhq/cairn/projections/audit"
	"github.com/cairnhq/cairn/projections/occupancy"
	"github.com/cairnhq/cairn/projections/sessions"
	"github.com/cairnhq/cairn/projections/settings"
	"github.com/cairnhq/cairn/projections/tenancy"
	"github.com/cairnhq/cairn/projections/usage"
	"github.com/cairnhq/cairn/projections/vfolders"
)

// Set is every read model over one database.
type Set struct {
	Sessions *sessions.ReadModel
	Agents   *agents.ReadModel
	Audit    *audit.ReadModel
	Tenancy  *tenancy.ReadModel
	VFolders *vfolders.ReadModel
	// Occupancy is what keypairs, users, projects and domains occupy and
	// queue (quotas).
	Occupancy *occupancy.ReadModel
	// Usage is what users, projects and domains used per day (statistics).
	Usage *usage.ReadModel
	// Settings are the run-time settings' changes.
	Settings *settings.ReadModel
}

// New builds every read model over db; the audit trail's queries read
// the sealed records from log (the event store).
func New(db *projections.DB, log audit.Log) Set {
	return Set{Sessions: sessions.New(db), Agents: agents.New(db), Tenancy: tenancy.New(db), VFolders: vfolders.New(db), Audit: audit.New(db, log), Occupancy: occupancy.New(db), Usage: usage.New(db),
		Settings: settings.New(db)}
}

// All returns the projections in the order they are run and rebuilt.
func (s Set) All() []projections.Projection {
	return []projections.Projection{s.Sessions, s.Agents, s.Tenancy, s.VFolders, s.Audit, s.Occupancy, s.Usage, s.Settings}
}

// Names are the read models' names, in the order they are run and rebuilt.
func Names() []string {
	return []string{sessions.Name, agents.Name, tenancy.Name, vfolders.Name, audit.Name, occupancy.Name, usage.Name, settings.Name}
}

// Select returns the projections named (all of them when names is empty),
// or an error naming the unknown ones and the known ones.
func (s Set) Select(names []string) ([]projections.Projection, error) {
	if err := CheckNames(names); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return s.All(), nil
	}
	var out []projections.Projection
	for _, p := range s.All() {
		if slices.Contains(names, p.Name()) {
			out = append(out, p)
		}
	}
	return out, nil
}

// CheckNames refuses names that are not read models', naming the known ones.
func CheckNames(names []string) error {
	var unknown []string
	for _, n := range names {
		if !slices.Contains(Names(), n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("unknown read model(s) %s; known: %s", strings.Join(unknown, ", "), strings.Join(Names(), ", "))
	}
	return nil
}
