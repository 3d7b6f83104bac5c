package accesslog_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/accesslog"
)

// signal is a log handler that tells when a line with message msg is
// logged.
type signal struct {
	msg string
	ch  chan struct{}
}

func (s signal) Enabled(context.Context, slog.Level) bool { return true }
func (s signal) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s signal) WithGroup(string) slog.Handler            { return s }
func (s signal) Handle(_ context.Context, r slog.Record) error {
	if r.Message == s.msg {
		select {
		case s.ch <- struct{}{}:
		default:
		}
	}
	return nil
}

// A Writer whose store takes no writes retries until it stops, then for
// StopTimeout, and then reports the records lost: the retries end with
// their context.
func TestWriterRetriesUntilItStops(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cairn.db"), sqlite.Options{Synchronous: "normal", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	store.Close() // every append fails from now on
	retrying := signal{msg: "cannot append access records; retrying", ch: make(chan struct{}, 1)}
	w, err := accesslog.NewWriter(accesslog.Config{Interval: time.Millisecond, StopTimeout: 50 * time.Millisecond, Logger: slog.New(retrying)}, store)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ctx, audit.Record{Time: time.Now(), Action: "GET /v1/sessions", Outcome: audit.Success, Status: 200, RequestID: "req-1"}); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	<-retrying.ch
	if w.Degraded() == nil {
		t.Error("retrying, yet not degraded")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Run: %v; want the records reported lost after StopTimeout", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run still retrying after its context ended and StopTimeout passed")
	}
}
