package podman

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/cairnhq/cairn/agents/runtime"
)

// StreamLogs writes the part of the container's log lr selects to w.
//
// Containers log through conmon's k8s-file driver: one file, a line per
// record, "<time> <stdout|stderr> <P|F> <bytes>", in the order conmon read
// the two streams; F ends a line of output, P is a piece of one (output
// not ended by a newline, or a line longer than conmon's buffer). The log
// is each record's bytes, with a newline after an F record: the
// container's output, byte for byte, and exactly what Podman's logs API
// sends. The file is read directly when this process can open it (Podman
// on this host): a scan from its start to find an offset costs
// milliseconds per MiB, and a follow reads only what was appended, every
// followPoll while output comes and less often while none does. Otherwise
// the log is read through the API (streamAPI).
func (r *Runtime) StreamLogs(ctx context.Context, id string, lr runtime.LogRange, w io.Writer) (runtime.LogRead, error) {
	if err := lr.Validate(); err != nil {
		return runtime.LogRead{}, err
	}
	path, err := r.logPath(ctx, id)
	if err != nil {
		return runtime.LogRead{Start: lr.Offset, Next: lr.Offset}, err
	}
	if lr.Follow {
		// conmon makes the file when the container starts.
		if err := r.awaitStart(ctx, id); err != nil {
			return runtime.LogRead{Start: lr.Offset, Next: lr.Offset}, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return r.streamAPI(ctx, id, lr, w)
	}
	defer f.Close()
	rw := runtime.NewRangeWriter(w, lr, 0)
	rec := recordReader{r: bufio.NewReaderSize(f, 64<<10)}
	wait := followPoll
	for {
		// The state is read before the file: once the container has
		// exited, conmon has written its last record.
		c, err := r.Inspect(ctx, id)
		if err != nil {
			return rw.Result(false), err
		}
		ended := c.State == runtime.StateExited
		n, err := rec.copyTo(rw)
		switch {
		case err != nil:
			return rw.Result(false), fmt.Errorf("podman: logs %s: %w", id, err)
		case rw.Full(), !lr.Follow, ended:
			return rw.Result(ended), nil
		case n > 0:
			wait = followPoll
		default:
			wait = min(2*wait, followPollMax)
		}
		select {
		case <-ctx.Done():
			return rw.Result(false), translate(ctx, "logs "+id, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// awaitStart waits while the container is created and not started.
func (r *Runtime) awaitStart(ctx context.Context, id string) error {
	for {
		c, err := r.Inspect(ctx, id)
		if err != nil || c.State != runtime.StateCreated {
			return err
		}
		select {
		case <-ctx.Done():
			return translate(ctx, "logs "+id, ctx.Err())
		case <-time.After(followPoll):
		}
	}
}

// logPath returns the path of the container's log file.
func (r *Runtime) logPath(ctx context.Context, id string) (string, error) {
	if id == "" {
		return "", fmt.Errorf("podman: logs: %w: empty container id", runtime.ErrInvalid)
	}
	data, err := containers.Inspect(r.call(ctx), id, nil)
	if err != nil {
		return "", translate(ctx, "logs "+id, err)
	}
	if !runtime.Managed(fromInspect(data).Labels) {
		return "", fmt.Errorf("podman: logs %s: %w: not a container Cairn manages", id, runtime.ErrNotFound)
	}
	if data.HostConfig == nil || data.HostConfig.LogConfig == nil || data.HostConfig.LogConfig.Path == "" {
		return "", fmt.Errorf("podman: logs %s: %w: no log file", id, runtime.ErrNotFound)
	}
	return data.HostConfig.LogConfig.Path, nil
}

// recordReader reads a k8s-file log's records as they are appended. A line
// not yet ended by its newline (conmon still writing it) is kept back
// until it is.
type recordReader struct {
	r       *bufio.Reader
	partial []byte
}

// copyTo writes the bytes of every whole record read now to w and returns
// how many it wrote.
func (rr *recordReader) copyTo(w *runtime.RangeWriter) (int, error) {
	n := 0
	for !w.Full() {
		line, err := rr.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) || (err == io.EOF && len(line) > 0) {
			rr.partial = append(rr.partial, line...)
			if err == io.EOF {
				return n, nil
			}
			continue
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if len(rr.partial) > 0 {
			line = append(rr.partial, line...)
			rr.partial = rr.partial[:0]
		}
		out, err := recordBytes(line)
		if err != nil {
			return n, err
		}
		if _, err := w.Write(out); err != nil {
			return n, err
		}
		n += len(out)
	}
	return n, nil
}

// recordBytes returns what a record line (ended by its newline, as
// copyTo reads them) adds to the log: its bytes, with the newline when it is an F record.
func recordBytes(line []byte) ([]byte, error) {
	rest := line
	for range 2 { // the time, then the stream
		var ok bool
		if _, rest, ok = bytes.Cut(rest, []byte{' '}); !ok {
			return nil, fmt.Errorf("%w: %q is not a k8s-file log line", runtime.ErrInvalid, line)
		}
	}
	tag, msg, ok := bytes.Cut(rest, []byte{' '})
	if !ok { // a record of no bytes may have no space before its newline
		tag, msg = rest[:len(rest)-1], rest[len(rest)-1:]
	}
	if string(tag) == "P" {
		return msg[:len(msg)-1], nil // the record's own newline
	}
	return msg, nil // F: the newline ends the output's line
}
