package node

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

// Logs returns a kernel's stdout and stderr, the most recent output last,
// limited as opts says (runtime.LogOptions: Tail lines, MaxBytes bytes,
// 1 MiB by default): from its container while it exists, running or
// exited, and from what the agent kept of them once it was removed (the
// last Config.LogArchiveBytes, for Config.RecordTTL).
//
// Errors are domain errors: KindNotFound for a kernel this agent has no
// logs of, KindInvalid for bad options, KindUnavailable when the agent is
// not running or Podman does not answer.
func (a *Agent) Logs(ctx context.Context, kernelID uuid.UUID, opts runtime.LogOptions) ([]byte, error) {
	const op = "agent.logs"
	if err := opts.Validate(); err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindInvalid, Err: err}
	}
	rt, ok := a.runtime()
	if !ok {
		return nil, domain.Errorf(op, domain.KindUnavailable, "agent %s is not running", a.cfg.AgentID)
	}
	name := runtime.ContainerName(kernelID.String())
	c, err := rt.Inspect(ctx, name)
	if err == nil && c.AgentID == a.cfg.AgentID {
		logs, err := rt.Logs(ctx, c.ID, opts)
		if err == nil {
			return logs, nil
		}
		if !errors.Is(err, runtime.ErrNotFound) {
			return nil, runtimeError(op, err)
		}
		// Removed meanwhile: its logs were kept first.
	} else if err != nil && !errors.Is(err, runtime.ErrNotFound) {
		return nil, runtimeError(op, err)
	}
	logs, ok, err := a.archive.read(kernelID, opts)
	switch {
	case err != nil:
		return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
	case !ok:
		return nil, domain.Errorf(op, domain.KindNotFound, "agent %s has no logs of kernel %s", a.cfg.AgentID, kernelID)
	}
	return logs, nil
}

// runtimeError translates a runtime error into a domain error.
func runtimeError(op string, err error) error {
	kind := domain.KindInternal
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		kind = domain.KindNotFound
	case errors.Is(err, runtime.ErrInvalid):
		kind = domain.KindInvalid
	case errors.Is(err, runtime.ErrUnavailable):
		kind = domain.KindUnavailable
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		kind = domain.KindUnavailable
	}
	return &domain.Error{Op: op, Kind: kind, Err: err}
}
