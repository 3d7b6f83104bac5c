package eventstore

import (
	"context"
	"errors"
	"fmt"
)

// Fence names the leadership a write is made under: a lease and the epoch
// at which this process holds it. A store that supports fencing refuses an
// append carrying a fence whose epoch is no longer the lease's current one
// (another process took the lease over since), with *FencedError, in the
// same transaction as the append: a deposed leader's late write is never
// stored, however long it was paused.
type Fence struct {
	// Lease is the lease's name, as the lease table knows it.
	Lease string
	// Epoch is the lease's epoch when this process took it; every takeover
	// increments it.
	Epoch int64
}

func (f Fence) String() string { return fmt.Sprintf("%s@%d", f.Lease, f.Epoch) }

// fenceKey is the context key of a Fence.
type fenceKey struct{}

// WithFence returns ctx carrying f: the appends made with it (or a context
// derived from it) are fenced by f. Leaders get such a context from their
// lease (infra/lease), so the fence reaches every write they make without
// being passed through each call. Appends whose context carries no fence
// (API requests) are not fenced.
func WithFence(ctx context.Context, f Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

// FenceFrom returns the fence ctx carries, if any.
func FenceFrom(ctx context.Context) (Fence, bool) {
	f, ok := ctx.Value(fenceKey{}).(Fence)
	return f, ok
}

// ErrFenced: the append carried a fence (WithFence) whose epoch is no
// longer its lease's: the writer lost its leadership, and nothing of the
// append was written. Typed as *FencedError.
var ErrFenced = errors.New("eventstore: fenced: the writer's lease epoch is stale")

// FencedError is the refusal of a fenced append.
type FencedError struct {
	Fence Fence
	// Current is the lease's epoch now (0 when the lease is unknown to the
	// store).
	Current int64
}

func (e *FencedError) Error() string {
	return fmt.Sprintf("eventstore: fenced: append under lease %q at epoch %d refused, the lease is at epoch %d", e.Fence.Lease, e.Fence.Epoch, e.Current)
}

// Is makes errors.Is(err, ErrFenced) true.
func (e *FencedError) Is(target error) bool { return target == ErrFenced }
