package projections

import (
	"context"
	"fmt"

	"github.com/cairnhq/cairn/domain"
)

// WaitFor blocks until the read model reflects position (Position() >=
// position): the read-your-writes wait of a query given the position a
// command returned. It returns nil at once for position 0. When ctx ends
// first, or the projector has stopped (Run returned), it returns a
// domain KindUnavailable error that wraps ctx's error or ErrStopped with
// the reason: the client may try again later.
func (p *Projector) WaitFor(ctx context.Context, position uint64) error {
	const op = "projections.wait"
	for {
		p.mu.Lock()
		pos, changed, stopped, stopErr := p.pos, p.changed, p.stopped, p.stopErr
		p.mu.Unlock()
		if pos >= position {
			return nil
		}
		if stopped {
			err := ErrStopped
			if stopErr != nil {
				err = fmt.Errorf("%w: %w", ErrStopped, stopErr)
			}
			return &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err,
				Message: fmt.Sprintf("read model %s is at position %d, not %d", p.name, pos, position)}
		}
		select {
		case <-ctx.Done():
			return &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: ctx.Err(),
				Message: fmt.Sprintf("read model %s is at position %d, waiting for %d", p.name, pos, position)}
		case <-changed:
		}
	}
}
