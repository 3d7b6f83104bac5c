package node

import (
	"context"
	"errors"
	"io"
	"time"

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

// containerPoll is how often a follow looks for a container being created.
const containerPoll = 250 * time.Millisecond

// supervises tells whether the agent supervises the kernel now.
func (a *Agent) supervises(id uuid.UUID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.kernels[id]
	return ok
}

// StreamLogs writes the part of a kernel's log r selects to w (see
// runtime.LogRange: one byte sequence, stdout and stderr interleaved as
// conmon stored them, addressed by byte offset), from its container while
// it exists and from what the agent kept of it once it was removed (the
// last Config.LogArchiveBytes, for Config.RecordTTL: bytes before those
// are lost, and the read starts after them, as LogRead.Start tells). A
// follow ends when the kernel's container has exited and its log is
// written, or when ctx ends; a follow of a kernel whose container is not
// created yet waits for it, and a container removed during a follow is
// finished from what was kept of it.
//
// Nothing is written before the kernel is found, so an error that comes
// with an empty w is the whole answer. Errors are domain errors, as Logs
// returns.
func (a *Agent) StreamLogs(ctx context.Context, kernelID uuid.UUID, r runtime.LogRange, w io.Writer) (runtime.LogRead, error) {
	const op = "agent.logs"
	if err := r.Validate(); err != nil {
		return runtime.LogRead{}, &domain.Error{Op: op, Kind: domain.KindInvalid, Err: err}
	}
	rt, ok := a.runtime()
	if !ok {
		return runtime.LogRead{}, domain.Errorf(op, domain.KindUnavailable, "agent %s is not running", a.cfg.AgentID)
	}
	name := runtime.ContainerName(kernelID.String())
	c, err := rt.Inspect(ctx, name)
	res := runtime.LogRead{Start: r.Offset, Next: r.Offset}
	// A kernel this agent supervises may not have its container yet: a
	// follow waits for it, its start known already.
	for r.Follow && errors.Is(err, runtime.ErrNotFound) && a.supervises(kernelID) {
		if n, ok := w.(runtime.StartNoter); ok {
			n.NoteLogStart(r.Offset)
		}
		select {
		case <-ctx.Done():
			return res, runtimeError(op, ctx.Err())
		case <-time.After(containerPoll):
		}
		c, err = rt.Inspect(ctx, name)
	}
	if err != nil && !errors.Is(err, runtime.ErrNotFound) {
		// Podman may answer an inspect of a container being removed with
		// another error than not found ("does not exist in database"):
		// look again.
		c, err = rt.Inspect(ctx, name)
	}
	if err == nil && c.AgentID == a.cfg.AgentID {
		res, err = rt.StreamLogs(ctx, c.ID, r, w)
		if err == nil {
			return res, nil
		}
		if !errors.Is(err, runtime.ErrNotFound) {
			// Podman may answer a container being removed with another
			// error than not found: look again.
			if _, ierr := rt.Inspect(ctx, name); !errors.Is(ierr, runtime.ErrNotFound) {
				return res, runtimeError(op, err)
			}
		}
		// Removed meanwhile: its logs were kept first; go on from there.
	} else if err != nil && !errors.Is(err, runtime.ErrNotFound) {
		return res, runtimeError(op, err)
	}
	rest := r
	rest.Offset = res.Next
	if r.Limit > 0 {
		if rest.Limit = r.Limit - (res.Next - r.Offset); rest.Limit <= 0 {
			return res, nil
		}
	}
	got, ok, err := a.archive.readRange(kernelID, rest, w)
	switch {
	case err != nil:
		return res, &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
	case !ok && res.Next == r.Offset:
		return res, domain.Errorf(op, domain.KindNotFound, "agent %s has no logs of kernel %s", a.cfg.AgentID, kernelID)
	case !ok:
		// Removed and not kept: what was written is all there is.
		return runtime.LogRead{Start: res.Start, Next: res.Next, Complete: true}, nil
	}
	if res.Next == r.Offset {
		res.Start = got.Start
	}
	res.Next, res.Complete = got.Next, got.Complete
	return res, nil
}
