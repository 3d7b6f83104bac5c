package readapi

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// Query parameters shared by several routes.
const (
	paramWaitForPosition = "wait_for_position"
	// retryAfterSeconds is the Retry-After of a wait that timed out.
	retryAfterSeconds = "1"
)

// ParseSessionID parses the {id} of a session route. A malformed id is
// answered like an unknown session (404), so the answer never tells a
// malformed id from a missing or hidden one.
func ParseSessionID(c *fiber.Ctx, op string) (uuid.UUID, error) {
	raw := c.Params("id")
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.Nil, domain.Errorf(op, domain.KindNotFound, "session %q not found", raw)
	}
	return id, nil
}

// SessionNotFound is the answer for a session that does not exist or that the
// caller may not see.
func SessionNotFound(op string, id uuid.UUID) error {
	return domain.Errorf(op, domain.KindNotFound, "session %s not found", id)
}

// QueryInt parses an optional integer query parameter within [lo, hi];
// absent, it is def. A bad value is KindInvalid naming the parameter.
func QueryInt(c *fiber.Ctx, op, name string, def, lo, hi int) (int, error) {
	raw := c.Query(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		return 0, domain.Invalid(op, name, "must be an integer between %d and %d, not %q", lo, hi, raw)
	}
	return n, nil
}

// WaitForPosition honours wait_for_position: it waits, at most MaxWait,
// until the read models reflect the position. When they do not, it sets
// Retry-After and returns a KindUnavailable error (503).
func (a *API) WaitForPosition(c *fiber.Ctx, op string) error {
	raw := c.Query(paramWaitForPosition)
	if raw == "" {
		return nil
	}
	pos, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return domain.Invalid(op, paramWaitForPosition, "must be a non-negative integer (a position a command returned), not %q", raw)
	}
	if pos == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), a.MaxWait)
	defer cancel()
	start := a.Clock()
	err = a.Waiter.WaitFor(ctx, pos)
	if err == nil {
		return nil
	}
	c.Set(fiber.HeaderRetryAfter, retryAfterSeconds)
	msg := fmt.Sprintf("the read models have not reached position %d", pos)
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		msg += fmt.Sprintf(" within %v", a.Clock().Sub(start).Round(time.Millisecond))
	}
	return &domain.Error{Op: op, Kind: domain.KindUnavailable, Message: msg + "; retry later", Err: err}
}
