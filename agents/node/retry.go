package node

import (
	"context"
	"errors"
	"time"

	"github.com/cenkalti/backoff/v4"

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
	attempt := 0
	try := func() error {
		attempt++
		err := op()
		if err != nil && !retryable(err) {
			return backoff.Permanent(err)
		}
		return err
	}
	notify := func(err error, wait time.Duration) {
		a.log.Warn("retrying", "operation", what, "attempt", attempt, "retry_in", wait, "error", err)
	}
	return backoff.RetryNotify(try, backoff.WithContext(exponential(a.cfg.RetryMin, a.cfg.RetryMax), ctx), notify)
}

// exponential waits min, then doubles up to max, without jitter and
// without end: the agent retries what may recover until it stops.
func exponential(min, max time.Duration) *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(min),
		backoff.WithMaxInterval(max),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0),
	)
}
