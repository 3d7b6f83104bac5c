package projections

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// Rebuild drops the projection's tables, recreates them from its
// migrations, resets its checkpoint to 0 and replays the log up to the last
// event committed when it started (or until the subscription has caught
// up, if that comes first); Run takes over from there. It ends even when
// writers append faster than it applies. progress (may be
// nil) is called after every batch with the events read so far and the
// number of events in the store when the rebuild started (raised to done
// if more arrived meanwhile).
//
// The reset is one transaction; the replay commits batch by batch like
// Run, so the store's writers keep going and readers see the read model
// fill up. Rebuild and Run exclude each other on one Projector (ErrBusy).
// Projectors of the same projection elsewhere (other replicas) stay
// correct: they notice the reset and resubscribe, and the checkpoint row
// keeps every event applied once.
func (p *Projector) Rebuild(ctx context.Context, progress func(done, total uint64)) error {
	if !p.active.CompareAndSwap(false, true) {
		return ErrBusy
	}
	defer p.active.Store(false)
	start := time.Now()

	total, head, err := p.countEvents(ctx)
	if err != nil {
		return err
	}
	if err := Setup(ctx, p.db, p.proj); err != nil {
		return err
	}
	if err := p.reset(ctx); err != nil {
		return err
	}
	p.setPosition(0)
	p.log.Info("projections: rebuilding", slog.Uint64("events", total))

	var done uint64
	report := func(n int) {
		done += uint64(n)
		if progress != nil {
			progress(done, max(total, done))
		}
	}
	if progress != nil {
		progress(0, total)
	}
	if err := p.follow(ctx, &head, report); err != nil {
		return fmt.Errorf("projections: %s: rebuild: %w", p.name, err)
	}
	p.log.Info("projections: rebuilt", slog.Uint64("events", done), slog.Uint64("position", p.Position()),
		slog.Duration("took", time.Since(start)))
	return nil
}

// reset drops the tables, runs every migration and sets the checkpoint to
// 0, in one transaction that holds the checkpoint row.
func (p *Projector) reset(ctx context.Context) error {
	err := p.db.inTx(ctx, func(tx txn) error {
		if _, err := lockCheckpoint(ctx, p.db, tx, p.name); err != nil {
			return err
		}
		tables := slices.Clone(p.proj.Tables())
		slices.Reverse(tables)
		for _, t := range tables {
			if _, err := tx.Exec(ctx, p.db.SQL("DROP TABLE IF EXISTS {schema}."+t)); err != nil {
				return fmt.Errorf("drop %s: %w", t, err)
			}
		}
		if err := migrate(ctx, p.db, tx, p.proj, 0); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, p.db.cp.setPos, p.name, 0)
		return err
	})
	if err != nil {
		return fmt.Errorf("projections: %s: reset: %w", p.name, err)
	}
	return nil
}

// countEvents counts the events in the store and returns the last
// position, for progress and for knowing when the replay is done: the read
// models live in the event store's database, whose log is the table events
// (eventstore/sqlite and eventstore/postgres).
func (p *Projector) countEvents(ctx context.Context) (count, head uint64, err error) {
	var n, last int64
	log := p.db.logDB()
	q := log.SQL(`SELECT count(*), COALESCE(MAX(position), 0) FROM {schema}.events`)
	if err := log.QueryRow(ctx, q).Scan(&n, &last); err != nil {
		return 0, 0, fmt.Errorf("projections: %s: count events: %w", p.name, err)
	}
	return uint64(n), uint64(last), nil
}
