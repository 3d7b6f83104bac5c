package agentlogs

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/readapi"
)

// streamer is an in-process agent whose kernel log is fixed bytes, cut as
// the agent cuts them (runtime.RangeWriter), or an error.
type streamer struct {
	log string
	err error
}

func (s streamer) Logs(context.Context, uuid.UUID, runtime.LogOptions) ([]byte, error) {
	return nil, s.err
}

func (s streamer) StreamLogs(_ context.Context, _ uuid.UUID, r runtime.LogRange, w io.Writer) (runtime.LogRead, error) {
	if s.err != nil {
		return runtime.LogRead{}, s.err
	}
	rw := runtime.NewRangeWriter(w, r, 0)
	if _, err := io.WriteString(rw, s.log); err != nil {
		return rw.Result(false), err
	}
	return rw.Result(true), nil
}

func TestOpenKernelLogFromTheLocalAgent(t *testing.T) {
	t.Parallel()
	kernel := uuid.NewString()
	s := NewSource(map[string]LocalAgent{
		"here": streamer{log: "0123456789"},
		"gone": streamer{err: domain.Errorf("agent.logs", domain.KindNotFound, "no logs of kernel")},
	}, nil, nil, nil)
	st, err := s.OpenKernelLog(context.Background(), "here", kernel, readapi.LogRange{Offset: 3, Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(st)
	next, complete := st.End()
	if err != nil || string(got) != "3456" || st.Start() != 3 || next != 7 || complete {
		t.Errorf("read %q, %v; start %d, end %d %v", got, err, st.Start(), next, complete)
	}
	st.Close()

	if _, err := s.OpenKernelLog(context.Background(), "gone", kernel, readapi.LogRange{}); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("OpenKernelLog of a kernel without logs: %v, want not found", err)
	}
	for _, bad := range []readapi.LogRange{{Offset: -1}, {Limit: -1}} {
		if _, err := s.OpenKernelLog(context.Background(), "here", kernel, bad); domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("OpenKernelLog(%+v): %v, want invalid", bad, err)
		}
	}
}

// The remote answer's end is checked against its trailers: an agent that
// stopped early, or whose count disagrees, is an error, not an end.
func TestOpenKernelLogFromARemoteAgent(t *testing.T) {
	t.Parallel()
	kernel := uuid.New()
	var next, failure string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/kernels/"+kernel.String()+"/logs" || q.Get("offset") != "5" || q.Get("limit") != "3" || q.Get("follow") != "true" {
			http.Error(w, "unexpected "+r.URL.String(), http.StatusTeapot)
			return
		}
		w.Header().Set(protocol.LogStartHeader, "5")
		w.Header().Set("Trailer", protocol.LogNextHeader+", "+protocol.LogCompleteHeader+", "+protocol.LogErrorTrailer)
		_, _ = io.WriteString(w, "abc")
		w.Header().Set(protocol.LogNextHeader, next)
		w.Header().Set(protocol.LogCompleteHeader, "true")
		if failure != "" {
			w.Header().Set(protocol.LogErrorTrailer, failure)
		}
	}))
	defer srv.Close()
	s := NewSource(nil, staticAddresses{"remote": srv.URL}, nil, nil)
	read := func() (string, int64, bool, error) {
		st, err := s.OpenKernelLog(context.Background(), "remote", kernel.String(), readapi.LogRange{Offset: 5, Limit: 3, Follow: true})
		if err != nil {
			return "", 0, false, err
		}
		defer st.Close()
		b, err := io.ReadAll(st)
		n, c := st.End()
		if st.Start() != 5 {
			t.Errorf("start %d, want 5", st.Start())
		}
		return string(b), n, c, err
	}
	next = "8"
	if b, n, c, err := read(); b != "abc" || n != 8 || !c || err != nil {
		t.Errorf("read %q, end %d %v, %v", b, n, c, err)
	}
	next = "9"
	if _, _, c, err := read(); domain.KindOf(err) != domain.KindUnavailable || c {
		t.Errorf("an end the trailer disagrees with: %v, complete %v", err, c)
	}
	next, failure = "8", "podman went away"
	if _, _, _, err := read(); domain.KindOf(err) != domain.KindUnavailable || !strings.Contains(err.Error(), "podman went away") {
		t.Errorf("an agent that stopped early: %v", err)
	}
}

// waiter is an in-process agent following a kernel that writes nothing
// more: its read ends only with its context.
type waiter struct{ ended chan error }

func (waiter) Logs(context.Context, uuid.UUID, runtime.LogOptions) ([]byte, error) { return nil, nil }

func (w waiter) StreamLogs(ctx context.Context, _ uuid.UUID, r runtime.LogRange, out io.Writer) (runtime.LogRead, error) {
	rw := runtime.NewRangeWriter(out, r, 0)
	_, _ = io.WriteString(rw, "so far\n")
	<-ctx.Done()
	w.ended <- ctx.Err()
	return rw.Result(false), ctx.Err()
}

// Closing a follow, or ending its context (the server's shutdown), ends
// the agent's read.
func TestOpenKernelLogFollowEnds(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"close", "context"} {
		a := waiter{ended: make(chan error, 1)}
		s := NewSource(map[string]LocalAgent{"here": a}, nil, nil, nil)
		ctx, cancel := context.WithCancel(context.Background())
		st, err := s.OpenKernelLog(ctx, "here", uuid.NewString(), readapi.LogRange{Follow: true})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 7)
		if _, err := io.ReadFull(st, buf); err != nil || string(buf) != "so far\n" {
			t.Fatalf("%s: read %q, %v", how, buf, err)
		}
		if how == "close" {
			st.Close()
		} else {
			cancel()
		}
		if err := <-a.ended; err == nil {
			t.Errorf("%s: the agent's read ended without its context ending", how)
		}
		if how == "context" {
			if _, err := io.ReadAll(st); err == nil {
				t.Errorf("a follow whose context ended read to a clean end")
			}
		}
		cancel()
	}
}
