package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnhq/cairn/eventstore"
)

// Wake-ups across processes. See the package documentation for why NOTIFY
// is never sent inside an append.

const (
	// flushTimeout bounds the last NOTIFY sent at Close.
	flushTimeout = 2 * time.Second
	// Reconnection back-off of the LISTEN connection.
	minListenBackoff = 100 * time.Millisecond
	maxListenBackoff = 10 * time.Second
)

// channelName is the NOTIFY channel of a schema's store. Channel names are
// identifiers of at most 63 bytes; long schema names are hashed.
func channelName(schema string) string {
	const prefix = "cairn_events_"
	if len(prefix)+len(schema) <= 63 {
		return prefix + schema
	}
	sum := sha256.Sum256([]byte(schema))
	return prefix + hex.EncodeToString(sum[:16])
}

// appended is called after an append that wrote events has committed: it
// wakes this Store's subscriptions now and asks the sender for a NOTIFY.
func (s *Store) appended() {
	s.local.Notify()
	if s.opts.DisableNotify {
		return
	}
	select {
	case s.kick <- struct{}{}:
	default: // a NOTIFY is already owed; it will cover this append too
	}
}

// runNotifySender sends one NOTIFY per kick, at most one per
// Options.NotifyInterval, so a burst of appends costs one notification. At
// stop it sends the one still owed.
func (s *Store) runNotifySender(ctx context.Context) {
	defer s.wg.Done()
	timer := time.NewTimer(s.opts.NotifyInterval)
	defer timer.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			s.flushNotify()
			return
		case <-s.kick:
		}
		err := s.sendNotify(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			// Close interrupted it; flushNotify below sends what is owed.
			select {
			case s.kick <- struct{}{}:
			default:
			}
		case err != nil && !failing:
			failing = true
			s.opts.Logger.Warn("eventstore/postgres: NOTIFY failed; other processes see appends at their next poll", slog.Any("error", err))
		case err == nil && failing:
			failing = false
			s.opts.Logger.Info("eventstore/postgres: NOTIFY works again")
		}
		timer.Reset(s.opts.NotifyInterval)
		select {
		case <-ctx.Done():
			s.flushNotify()
			return
		case <-timer.C:
		}
	}
}

// flushNotify sends the NOTIFY still owed, if any, at Close.
func (s *Store) flushNotify() {
	select {
	case <-s.kick:
	default:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if err := s.sendNotify(ctx); err != nil {
		s.opts.Logger.Warn("eventstore/postgres: last NOTIFY at close failed", slog.Any("error", err))
	}
}

// sendNotify notifies the channel in its own one-statement transaction. The
// commit need not wait for the disk (a lost hint costs nothing), which keeps
// the cluster-wide notify lock and the transaction's xid short-lived.
func (s *Store) sendNotify(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`, s.channel, s.instanceID)
	return err
}

// startListener starts the LISTEN connection at the first Subscribe.
func (s *Store) startListener() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return eventstore.ErrClosed
	}
	if s.listening || s.opts.DisableNotify {
		return nil
	}
	s.listening = true
	s.wg.Add(1)
	go s.runListener(s.bg)
	return nil
}

// runListener keeps a LISTEN connection open until ctx ends, reconnecting
// with back-off. Subscriptions poll meanwhile, so a lost connection only
// delays wake-ups.
func (s *Store) runListener(ctx context.Context) {
	defer s.wg.Done()
	backoff := minListenBackoff
	for {
		err := s.listen(ctx, func() { backoff = minListenBackoff })
		if ctx.Err() != nil {
			return
		}
		s.opts.Logger.Warn("eventstore/postgres: LISTEN connection lost; subscriptions poll until it is back",
			slog.Any("error", err), slog.Duration("retry_in", backoff))
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, maxListenBackoff)
	}
}

// listen runs one LISTEN connection until it fails or ctx ends. connected is
// called once it listens.
func (s *Store) listen(ctx context.Context, connected func()) (err error) {
	conn, err := pgx.ConnectConfig(ctx, s.listenConfig)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		defer cancel()
		if cerr := conn.Close(cctx); cerr != nil && ctx.Err() == nil {
			err = errors.Join(err, fmt.Errorf("close: %w", cerr))
		}
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+quoteIdent(s.channel)); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	connected()
	// Others may have appended while nobody listened.
	s.local.Notify()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		if n.Payload != s.instanceID {
			s.local.Notify()
		}
	}
}
