package occupancy

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/quota"
)

// Of returns what one subject occupies and queues: scope and key as in
// quota.Session.Key (access key, user id, "<domain>/<project>", domain
// name). A subject the read model does not know occupies nothing. It
// reads the subject's totals: a few rows, however many sessions it has.
func (m *ReadModel) Of(ctx context.Context, scope quota.Scope, key string) (quota.Occupancy, error) {
	const op = "occupancy.of"
	if _, ok := scopeColumns[scope]; !ok {
		return quota.Occupancy{}, domain.Invalid(op, "scope", "unknown scope %q (keypair, user, project, domain)", scope)
	}
	rows, err := m.db.Query(ctx, m.sql.subject, string(scope), key)
	if err != nil {
		return quota.Occupancy{}, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	var o quota.Occupancy
	for rows.Next() {
		var kind, slot string
		var amount int64
		if err := rows.Scan(&kind, &slot, &amount); err != nil {
			return quota.Occupancy{}, &domain.Error{Op: op, Kind: domain.KindInternal, Err: errors.Join(err, rows.Close())}
		}
		if err := add(&o, kind, slot, amount); err != nil {
			return quota.Occupancy{}, &domain.Error{Op: op, Kind: domain.KindInternal, Err: errors.Join(err, rows.Close())}
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return quota.Occupancy{}, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	return o, nil
}

// Snapshot returns the occupancy of every subject that holds or queues
// something, as quota.Ledger.Snapshot does from the same events. Each
// scope's totals are read in one statement.
func (m *ReadModel) Snapshot(ctx context.Context) (quota.Snapshot, error) {
	const op = "occupancy.snapshot"
	snap := quota.Snapshot{}
	for _, scope := range quota.Scopes {
		subjects := map[string]quota.Occupancy{}
		rows, err := m.db.Query(ctx, m.sql.subjects, string(scope))
		if err != nil {
			return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
		}
		for rows.Next() {
			var kind, key, slot string
			var amount int64
			if err := rows.Scan(&kind, &key, &slot, &amount); err != nil {
				return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Err: errors.Join(err, rows.Close())}
			}
			o := subjects[key]
			if err := add(&o, kind, slot, amount); err != nil {
				return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Err: errors.Join(err, rows.Close())}
			}
			subjects[key] = o
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
		}
		snap[scope] = subjects
	}
	return snap, nil
}

// add folds one row of the subject queries into o.
func add(o *quota.Occupancy, kind, slot string, amount int64) error {
	put := func(s *domain.Slots) {
		if amount == 0 {
			return
		}
		if *s == nil {
			*s = domain.Slots{}
		}
		(*s)[domain.SlotName(slot)] += domain.Quantity(amount)
	}
	switch kind {
	case "occupied":
		put(&o.Occupied)
	case "requested":
		put(&o.PendingSlots)
	case phasePending:
		o.Pending += int(amount)
	case phaseActive:
		o.Concurrent += int(amount)
	default:
		return fmt.Errorf("occupancy: unexpected row kind %q", kind)
	}
	return nil
}
