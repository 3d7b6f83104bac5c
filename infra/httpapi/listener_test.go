package httpapi

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// failingListener makes the first Accepts of a real listener fail with
// errs, in turn, as accept4 does when the process is out of descriptors.
type failingListener struct {
	net.Listener
	errs []error
}

func (l *failingListener) Accept() (net.Conn, error) {
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept4", err)}
	}
	return l.Listener.Accept()
}

func TestListenerRetriesFailedAccepts(t *testing.T) {
	t.Parallel()
	real, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	fl := &failingListener{Listener: real, errs: []error{syscall.EMFILE, syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED, syscall.ENOBUFS}}
	ln, err := NewListener(fl, ListenerConfig{Name: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: reg, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	dialed := make(chan error, 1)
	go func() {
		c, err := net.Dial("tcp", real.Addr().String())
		if err == nil {
			c.Close()
		}
		dialed <- err
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatalf("Accept returned %v; want the failed accepts retried until a connection comes", err)
	}
	c.Close()
	if err := <-dialed; err != nil {
		t.Fatal(err)
	}
	errs := listenerMetricsFor(reg).acceptErrors
	for reason, want := range map[string]float64{"EMFILE": 2, "ENFILE": 1, "ECONNABORTED": 1, "ENOBUFS": 1, "other": 0} {
		if got := testutil.ToFloat64(errs.WithLabelValues("test", reason)); got != want {
			t.Errorf("cairn_http_accept_errors_total{reason=%q} = %v, want %v", reason, got, want)
		}
	}

	// A closed listener's error ends the serve loop.
	ln.Close()
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept on a closed listener returned %v, want net.ErrClosed", err)
	}
}

func TestListenerReturnsPermanentErrors(t *testing.T) {
	t.Parallel()
	real, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	ln, err := NewListener(&failingListener{Listener: real, errs: []error{syscall.EINVAL}}, ListenerConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ln.Accept(); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Accept returned %v, want EINVAL (a socket that does not listen) returned, not retried", err)
	}
}

func TestDefaultConnLimitsLeaveDescriptorsForTheRest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		nofile uint64
		want   int
	}{
		{64, minDefaultConns},
		{1024, 1024 - 256},
		{20000, 15000},
		{1 << 40, maxDefaultConns},
	}
	for _, c := range cases {
		got := maxConnsFor(c.nofile)
		if got != c.want {
			t.Errorf("maxConnsFor(%d) = %d, want %d", c.nofile, got, c.want)
		}
		if c.nofile > 2*reservedFiles && c.nofile < maxDefaultConns && uint64(got)+reservedFiles > c.nofile {
			t.Errorf("maxConnsFor(%d) = %d leaves fewer than %d descriptors", c.nofile, got, reservedFiles)
		}
	}
	if DefaultMaxConns() <= 0 || DefaultMaxConnsPerIP(DefaultMaxConns()) <= 0 {
		t.Fatal("the default limits must be positive")
	}
}
