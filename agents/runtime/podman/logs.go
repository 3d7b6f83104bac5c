package podman

import (
	"context"
	"strconv"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/cairnhq/cairn/agents/runtime"
)

// Logs returns the container's stdout and stderr in the order conmon
// recorded them, keeping only the last opts.MaxBytes bytes.
func (r *Runtime) Logs(ctx context.Context, id string, opts runtime.LogOptions) ([]byte, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.WithDefaults()
	c, err := r.Inspect(ctx, id)
	if err != nil {
		return nil, err
	}
	lo := &containers.LogOptions{Stdout: ptr(true), Stderr: ptr(true), Follow: ptr(false)}
	if opts.Tail > 0 {
		lo.Tail = ptr(strconv.Itoa(opts.Tail))
	}

	// The bindings deliver frames on channels. One channel for both
	// streams keeps the order the service sends them in; the goroutine ends when the service has
	// sent everything (no follow) or ctx ends.
	frames := make(chan string, 64)
	done := make(chan error, 1)
	go func() { done <- containers.Logs(r.call(ctx), c.ID, lo, frames, frames) }()

	out := tailBuffer{max: opts.MaxBytes}
	for {
		select {
		case f := <-frames:
			out.write(f)
		case err := <-done:
			// No more sends: take what is buffered.
			for {
				select {
				case f := <-frames:
					out.write(f)
				default:
					if err != nil {
						return nil, translate(ctx, "logs "+id, err)
					}
					return out.bytes(), nil
				}
			}
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) write(s string) {
	t.buf = append(t.buf, s...)
	// Trim lazily so a long log costs amortised O(n), not O(n*max).
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
}

func (t *tailBuffer) bytes() []byte {
	if len(t.buf) > t.max {
		return t.buf[len(t.buf)-t.max:]
	}
	return t.buf
}
