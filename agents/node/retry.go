package node

import (
	"context"
	"errors"
	"time"

	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

// transient reports whether err may go away by itself: Podman or the bus
// unavailable. Everything else is the kernel's fault and is reported.
func transient(err error) bool {
	return errors.Is(err, runtime.ErrUnavailable) || errors.Is(err, domain.ErrUnavailable)
}

// retry calls op until it succeeds, fails for good (an error that is not
// transient) or ctx ends, waiting Config.RetryMin after the first
// transient failure, doubling up to Config.RetryMax. It returns op's last
// error, or ctx's.
func (a *Agent) retry(ctx context.Context, what string, op func() error) error {
	return a.retryWhile(ctx, what, transient, op)
}

// retryWhile is retry with another test of which errors are worth a retry.
func (a *Agent) retryWhile(ctx context.Context, what string, retryable func(error) bool, op func() error) error {
	wait := a.cfg.RetryMin
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || !retryable(err) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		a.log.Warn("retrying", "operation", what, "attempt", attempt, "retry_in", wait, "error", err)
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
		wait = min(2*wait, a.cfg.RetryMax)
	}
}

// sleep waits d or until ctx ends; false if ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
