package httpapi

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// ListenerConfig configures NewListener.
type ListenerConfig struct {
	// Name tells the listener apart in logs and metrics (e.g. "api").
	Name   string
	Logger *slog.Logger
	// Registerer receives cairn_http_accept_errors_total (nil: none).
	Registerer prometheus.Registerer
	// MinBackoff and MaxBackoff bound the wait before the next Accept
	// after a failed one (defaults 5ms and 1s, as net/http).
	MinBackoff, MaxBackoff time.Duration
	// LogEvery is the least time between two log lines about failed
	// accepts (default 10s); the metric counts every one.
	LogEvery time.Duration
}

func (c ListenerConfig) withDefaults() ListenerConfig {
	if c.MinBackoff <= 0 {
		c.MinBackoff = 5 * time.Millisecond
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = max(time.Second, c.MinBackoff)
	}
	if c.LogEvery <= 0 {
		c.LogEvery = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// NewListener wraps ln so that a failed Accept for want of resources
// (EMFILE, ENFILE, ENOBUFS, ENOMEM, an aborted connection...) is retried
// after a backoff instead of returned: fasthttp, like any server loop,
// stops serving for good on the first error Accept returns. Accept only
// returns an error once ln is closed or broken beyond repair (EBADF,
// EINVAL, ENOTSOCK).
func NewListener(ln net.Listener, cfg ListenerConfig) net.Listener {
	cfg = cfg.withDefaults()
	b := &backoff.ExponentialBackOff{
		InitialInterval: cfg.MinBackoff,
		Multiplier:      2,
		MaxInterval:     cfg.MaxBackoff,
		Clock:           backoff.SystemClock,
	}
	b.Reset()
	return &retryListener{
		Listener: ln,
		cfg:      cfg,
		backoff:  b,
		errors:   acceptErrors(cfg.Registerer).MustCurryWith(prometheus.Labels{"listener": cfg.Name}),
		logs:     &rate.Sometimes{First: 1, Interval: cfg.LogEvery},
	}
}

type retryListener struct {
	net.Listener
	cfg ListenerConfig
	// mu serialises the backoff state; Accept is called from one loop
	// but nothing says only one.
	mu      sync.Mutex
	backoff *backoff.ExponentialBackOff
	errors  *prometheus.CounterVec
	logs    *rate.Sometimes
	failed  int // accepts failed since the last log line
}

func (l *retryListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			l.mu.Lock()
			l.backoff.Reset()
			l.mu.Unlock()
			return c, nil
		}
		if !retryable(err) {
			return nil, err
		}
		l.errors.WithLabelValues(acceptErrorReason(err)).Inc()
		l.mu.Lock()
		wait := l.backoff.NextBackOff()
		l.failed++
		l.logs.Do(func() {
			l.cfg.Logger.Warn("accepting a connection failed; retrying", "listener", l.cfg.Name, "err", err,
				"failed_since_last_log", l.failed, "retry_in", wait)
			l.failed = 0
		})
		l.mu.Unlock()
		time.Sleep(wait)
	}
}

// retryable tells the errors after which a later Accept may succeed: all
// but a closed listener and the errors of a socket that is not (or no
// longer) a listening one.
func retryable(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	for _, permanent := range []syscall.Errno{syscall.EBADF, syscall.EINVAL, syscall.ENOTSOCK, syscall.EOPNOTSUPP, syscall.EFAULT} {
		if errors.Is(err, permanent) {
			return false
		}
	}
	return true
}

// acceptErrorReason is the metric's reason label: the errno's name for
// the usual ones, "other" for anything else.
func acceptErrorReason(err error) string {
	for _, r := range []struct {
		errno syscall.Errno
		name  string
	}{
		{syscall.EMFILE, "EMFILE"}, {syscall.ENFILE, "ENFILE"}, {syscall.ENOBUFS, "ENOBUFS"},
		{syscall.ENOMEM, "ENOMEM"}, {syscall.ECONNABORTED, "ECONNABORTED"},
	} {
		if errors.Is(err, r.errno) {
			return r.name
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return "other"
}

// acceptErrors is the counter of failed accepts, registered once per
// registry: several listeners (the audited and the unaudited API) share it.
func acceptErrors(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cairn_http_accept_errors_total",
		Help: "Failed accepts of HTTP connections, retried after a backoff, by listener and reason (EMFILE: out of file descriptors).",
	}, []string{"listener", "reason"})
	return registerOrReuse(reg, c)
}

// registerOrReuse registers c, or returns the collector of the same
// description already registered.
func registerOrReuse[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err) // a programming error, as MustRegister
	}
	return c
}
