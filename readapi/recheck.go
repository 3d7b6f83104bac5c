package readapi

import (
	"context"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
)

// DefaultRecheckWait bounds how long a lookup that found nothing waits for
// the read models to reach the log's head (Deps.RecheckWait).
const DefaultRecheckWait = 2 * time.Second

// recheck makes a GET of one object read its client's writes without
// wait_for_position: when h answers not found for an object it did not
// hide (the read models may not show a write committed before the
// request yet), it waits until the read models reach the log's head as of
// now, at most RecheckWait, and runs h once more. A true 404 costs one
// read of the head and, when the read models are level with it, no wait.
func (a *API) recheck(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		err := h(c)
		if !errors.Is(err, domain.ErrNotFound) || accesslog.Denied(c) || !a.ReachHead(c.UserContext()) {
			return err
		}
		return h(c)
	}
}

// ReachHead waits, at most RecheckWait, until the read models reflect
// every event committed so far, and reports whether they do.
func (a *API) ReachHead(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, a.RecheckWait)
	defer cancel()
	head, err := a.Log.Head(ctx)
	if err != nil {
		return false
	}
	return a.Waiter.WaitFor(ctx, head) == nil
}
