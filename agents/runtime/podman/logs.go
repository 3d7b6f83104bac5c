package podman

import (
	"context"
	"io"
	"strconv"
	"time"

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

// followPoll is how often a follow looks whether a created container has
// started: Podman ends a follow of a container that never ran at once.
const followPoll = 250 * time.Millisecond

// StreamLogs writes the part of the container's log lr selects to w. The
// log is the frames of Podman's logs API, stdout's and stderr's through
// one channel in the order the service sends them (conmon's k8s-file
// order); each frame is a record's bytes with the newline that ended it,
// so the concatenation is the container's output, byte for byte. Each
// read starts from the log's first byte and skips to the offset: the API
// has no byte offsets.
func (r *Runtime) StreamLogs(ctx context.Context, id string, lr runtime.LogRange, w io.Writer) (runtime.LogRead, error) {
	if err := lr.Validate(); err != nil {
		return runtime.LogRead{}, err
	}
	res := runtime.LogRead{Start: lr.Offset, Next: lr.Offset}
	for {
		c, err := r.Inspect(ctx, id)
		if err != nil {
			return res, err
		}
		ended := c.State == runtime.StateExited
		if lr.Follow && c.State == runtime.StateCreated {
			select {
			case <-ctx.Done():
				return res, translate(ctx, "logs "+id, ctx.Err())
			case <-time.After(followPoll):
				continue
			}
		}
		part := runtime.LogRange{Offset: res.Next}
		if lr.Limit > 0 {
			part.Limit = lr.Limit - (res.Next - lr.Offset)
		}
		rw := runtime.NewRangeWriter(w, part, 0)
		err = r.copyLogs(ctx, c.ID, lr.Follow && !ended, rw)
		got := rw.Result(ended)
		res.Next, res.Complete = got.Next, got.Complete
		switch {
		case err != nil:
			return res, err
		case !lr.Follow || ended || rw.Full():
			return res, nil
		}
		// Podman ended the follow because the container exited (or
		// restarted): look again, and read what came after.
	}
}

// copyLogs writes the container's log frames to rw until the service has
// sent them all (follow: until the container exits) or rw is full.
func (r *Runtime) copyLogs(ctx context.Context, id string, follow bool, rw *runtime.RangeWriter) error {
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	lo := &containers.LogOptions{Stdout: ptr(true), Stderr: ptr(true), Follow: ptr(follow)}
	frames := make(chan string, 64)
	done := make(chan error, 1)
	go func() { done <- containers.Logs(r.call(callCtx), id, lo, frames, frames) }()

	// Every frame is received, even after a write failed or rw is full,
	// until the bindings return: they send without a select and would
	// block forever otherwise.
	var werr error
	take := func(f string) {
		if werr != nil || rw.Full() {
			return
		}
		if _, werr = io.WriteString(rw, f); werr != nil || rw.Full() {
			cancel()
		}
	}
	for {
		select {
		case f := <-frames:
			take(f)
		case err := <-done:
			for {
				select {
				case f := <-frames:
					take(f)
					continue
				default:
				}
				break
			}
			switch {
			case werr != nil:
				return werr
			case rw.Full():
				return nil
			}
			return translate(ctx, "logs "+id, err)
		}
	}
}
