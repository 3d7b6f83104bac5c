package podman

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/agents/runtime"
)

// chatty prints to stdout and stderr over about two seconds and ends
// with output that no newline ends.
var chatty = []string{"sh", "-c", `for i in $(seq 1 20); do echo out$i; echo err$i >&2; sleep 0.1; done; printf end`}

// A follow started before the container, from offset 0, gives exactly the
// bytes a read after it exited gives; a read from any offset gives the
// rest of them, and a follow cut short resumes where it stopped.
func TestStreamLogsFollowIsTheDownload(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c, _, err := h.rt.Ensure(h.ctx, h.spec(chatty...))
	if err != nil {
		t.Fatal(err)
	}

	// Followed from before the start: the follow waits for it.
	type result struct {
		b   []byte
		res runtime.LogRead
		err error
	}
	followed := make(chan result, 1)
	go func() {
		var b bytes.Buffer
		res, err := h.rt.StreamLogs(h.ctx, c.ID, runtime.LogRange{Follow: true}, &b)
		followed <- result{b.Bytes(), res, err}
	}()
	// A follow cut short by a limit, then resumed from where it stopped.
	resumed := make(chan result, 1)
	go func() {
		var b bytes.Buffer
		first, err := h.rt.StreamLogs(h.ctx, c.ID, runtime.LogRange{Limit: 37, Follow: true}, &b)
		if err != nil || first.Next != 37 || first.Complete {
			resumed <- result{nil, first, fmt.Errorf("first part: %+v, %v", first, err)}
			return
		}
		res, err := h.rt.StreamLogs(h.ctx, c.ID, runtime.LogRange{Offset: first.Next, Follow: true}, &b)
		resumed <- result{b.Bytes(), res, err}
	}()
	if err := h.rt.Start(h.ctx, c.ID); err != nil {
		t.Fatal(err)
	}

	f := <-followed
	if f.err != nil {
		t.Fatalf("follow: %v", f.err)
	}
	var download bytes.Buffer
	whole, err := h.rt.StreamLogs(h.ctx, c.ID, runtime.LogRange{}, &download)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.b, download.Bytes()) {
		t.Fatalf("followed %q\nbut the download is %q", f.b, download.Bytes())
	}
	want := runtime.LogRead{Start: 0, Next: int64(download.Len()), Complete: true}
	if f.res != want || whole != want {
		t.Errorf("follow ended %+v, download %+v; want %+v", f.res, whole, want)
	}
	log := download.String()
	for i := 1; i <= 20; i++ {
		for _, line := range []string{fmt.Sprintf("out%d\n", i), fmt.Sprintf("err%d\n", i)} {
			if strings.Count(log, line) != 1 {
				t.Errorf("%q appears %d times in the log %q", line, strings.Count(log, line), log)
			}
		}
	}
	if !strings.HasSuffix(log, "\nend") {
		t.Errorf("the log does not end with the unterminated %q: %q", "end", log)
	}

	r := <-resumed
	if r.err != nil || !bytes.Equal(r.b, download.Bytes()) || r.res != (runtime.LogRead{Start: 37, Next: want.Next, Complete: true}) {
		t.Errorf("follow resumed at 37: %q, %+v, %v; want the download", r.b, r.res, r.err)
	}

	// Reads after the end, from every offset, with and without a limit.
	for _, off := range []int64{0, 1, 5, int64(download.Len()) / 2, int64(download.Len()) - 1, int64(download.Len())} {
		var b bytes.Buffer
		res, err := h.rt.StreamLogs(h.ctx, c.ID, runtime.LogRange{Offset: off, Follow: off%2 == 0}, &b)
		if err != nil || b.String() != log[off:] || res != (runtime.LogRead{Start: off, Next: want.Next, Complete: true}) {
			t.Errorf("from %d: %q, %+v, %v; want %q", off, b.String(), res, err, log[off:])
		}
		b.Reset()
		res, err = h.rt.StreamLogs(h.ctx, c.ID, runtime.LogRange{Offset: off, Limit: 10}, &b)
		end := min(off+10, want.Next)
		if err != nil || b.String() != log[off:end] || res.Next != end || res.Complete != (off+10 > want.Next) {
			t.Errorf("from %d, 10 bytes: %q, %+v, %v; want %q", off, b.String(), res, err, log[off:end])
		}
	}
}

// Several MiB written as fast as the container can, followed from the
// start: not a byte lost, none repeated.
func TestStreamLogsLargeOutput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const n = 600_000
	var want bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if want.Len() < 3<<20 {
		t.Fatalf("the test writes only %d bytes", want.Len())
	}
	c := h.run(h.spec("sh", "-c", fmt.Sprintf("seq 1 %d", n)))
	var got bytes.Buffer
	res, err := h.rt.StreamLogs(h.ctx, c.ID, runtime.LogRange{Follow: true}, &got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		d := firstDifference(got.Bytes(), want.Bytes())
		t.Fatalf("followed %d bytes, want %d (first difference at %d: %q, want %q)", got.Len(), want.Len(), d,
			got.Bytes()[max(d-40, 0):min(d+40, got.Len())], want.Bytes()[max(d-40, 0):min(d+40, want.Len())])
	}
	if res != (runtime.LogRead{Next: int64(want.Len()), Complete: true}) {
		t.Errorf("follow ended %+v", res)
	}
}

func TestStreamLogsErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var b bytes.Buffer
	if _, err := h.rt.StreamLogs(h.ctx, "cairn-no-such-kernel-"+randomID(t), runtime.LogRange{}, &b); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("StreamLogs of no container: %v, want ErrNotFound", err)
	}
	if _, err := h.rt.StreamLogs(h.ctx, "x", runtime.LogRange{Offset: -1}, &b); !errors.Is(err, runtime.ErrInvalid) {
		t.Errorf("StreamLogs from -1: %v, want ErrInvalid", err)
	}
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
