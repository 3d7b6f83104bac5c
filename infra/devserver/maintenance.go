package devserver

import (
	"context"

	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/infra/lease"
	"github.com/cairnhq/cairn/infra/maintenance"
	"github.com/cairnhq/cairn/infra/readmodels"
	"github.com/cairnhq/cairn/projections"
)

// startMaintenance makes the maintenance service (online rebuilds, audit
// verification, the system's description for GET /v1/system) before the
// projectors start, since it runs them (Service.Supervise).
func (s *server) startMaintenance() error {
	mechanism := "file lock beside the SQLite store"
	var table func(context.Context) (map[string]lease.State, error)
	if st, ok := s.store.(*postgres.Store); ok {
		mechanism = "PostgreSQL lease with an epoch fencing its leader's appends"
		table = func(ctx context.Context) (map[string]lease.State, error) {
			rows, err := lease.List(ctx, st.Pool(), st.Schema())
			if err != nil {
				return nil, err
			}
			byName := make(map[string]lease.State, len(rows))
			for _, r := range rows {
				byName[r.Name] = r
			}
			out := map[string]lease.State{}
			for _, l := range s.leases.List() {
				if r, ok := byName[leaseName(l.Name)]; ok {
					out[l.Name] = r
				}
			}
			return out, nil
		}
	}
	s.leases = maintenance.NewLeases(mechanism, s.cfg.Clock)
	m, err := maintenance.New(maintenance.Config{
		Store: s.store,
		DB:    s.db,
		ReadModels: func(db *projections.DB, name string) (projections.Projection, error) {
			sel, err := readmodels.New(db, s.store).Select([]string{name})
			if err != nil {
				return nil, err
			}
			return sel[0], nil
		},
		Shadow: func(ctx context.Context, name string) (*projections.DB, func() error, error) {
			return readmodels.OpenShadow(ctx, s.store, s.db, name)
		},
		System: maintenance.SystemConfig{
			Version:  s.cfg.Version,
			StoreDSN: s.cfg.Store,
			Bus: func() maintenance.Bus {
				return maintenance.Bus{Mode: "embedded", URL: s.nats.ClientURL(), Connected: s.bus != nil && s.bus.Connected()}
			},
			Leases:      s.leases,
			LeaseTable:  table,
			DataDirFree: s.dataDirFree,
		},
		Clock:  s.cfg.Clock,
		Logger: s.log,
	})
	if err != nil {
		return err
	}
	s.maint = m
	s.parts.onClose("maintenance jobs", m.Close)
	return nil
}
