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

// How often a follow reads the log again: followPoll after new output,
// doubling while none comes, up to followPollMax.
const (
	followPoll    = 200 * time.Millisecond
	followPollMax = 2 * time.Second
)

// streamAPI is StreamLogs through Podman's logs API, for a log file this
// process cannot open (Podman on another host). The log is the API's
// frames, stdout's and stderr's through one channel in the order the
// service sends them (the file's order): each frame is a record's bytes
// with the newline that ended it, the same bytes the file gives. The API
// has no byte offsets: each read starts from the log's first byte and
// skips to the offset, which costs Podman about as much as the log is
// long.
//
// A follow polls such reads rather than use the API's own follow, which
// drops records of a fast writer (Podman 4.3). While the container runs,
// the last record read is held back until a later read: it may have been
// read while conmon was still writing it.
func (r *Runtime) streamAPI(ctx context.Context, id string, lr runtime.LogRange, w io.Writer) (runtime.LogRead, error) {
	if err := lr.Validate(); err != nil {
		return runtime.LogRead{}, err
	}
	res := runtime.LogRead{Start: lr.Offset, Next: lr.Offset}
	wait := followPoll
	for {
		c, err := r.Inspect(ctx, id)
		if err != nil {
			return res, err
		}
		ended := c.State == runtime.StateExited
		if !lr.Follow || c.State != runtime.StateCreated {
			part := runtime.LogRange{Offset: res.Next}
			if lr.Limit > 0 {
				part.Limit = lr.Limit - (res.Next - lr.Offset)
			}
			rw := runtime.NewRangeWriter(w, part, 0)
			err = r.copyLogs(ctx, c.ID, !ended, rw)
			got := rw.Result(ended)
			if got.Next > res.Next {
				wait = followPoll
			} else {
				wait = min(2*wait, followPollMax)
			}
			res.Next, res.Complete = got.Next, got.Complete
			switch {
			case err != nil:
				return res, err
			case !lr.Follow || ended || rw.Full():
				return res, nil
			}
		}
		select {
		case <-ctx.Done():
			return res, translate(ctx, "logs "+id, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// copyLogs writes the container's log frames to rw until the service has
// sent them all or rw is full; holdLast keeps the last frame back.
func (r *Runtime) copyLogs(ctx context.Context, id string, holdLast bool, rw *runtime.RangeWriter) error {
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	lo := &containers.LogOptions{Stdout: ptr(true), Stderr: ptr(true), Follow: ptr(false)}
	frames := make(chan string, 64)
	done := make(chan error, 1)
	go func() { done <- containers.Logs(r.call(callCtx), id, lo, frames, frames) }()

	// Every frame is received, even after a write failed or rw is full,
	// until the bindings return: they send without a select and would
	// block forever otherwise.
	var (
		werr    error
		last    string
		holding bool
	)
	write := func(f string) {
		if werr != nil || rw.Full() {
			return
		}
		if _, werr = io.WriteString(rw, f); werr != nil || rw.Full() {
			cancel()
		}
	}
	take := func(f string) {
		if holding {
			write(last)
		}
		last, holding = f, true
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
			case err != nil:
				return translate(ctx, "logs "+id, err)
			}
			if holding && !holdLast {
				write(last)
			}
			return werr
		}
	}
}
