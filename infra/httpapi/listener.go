package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// ListenerConfig configures NewListener: the connection limits and the
// retry of failed accepts.
type ListenerConfig struct {
	// Name tells the listener apart in logs and metrics (e.g. "api").
	Name string
	// MaxConns is the most connections open at once; more are answered
	// 503 and closed at once (default DefaultMaxConns(): the open-files
	// limit less what the rest of the process needs).
	MaxConns int
	// MaxConnsPerIP is the most connections open at once from one client
	// address (an IPv6 client: its /64); more are answered 429 and closed
	// at once (default DefaultMaxConnsPerIP(MaxConns)).
	MaxConnsPerIP int
	Logger        *slog.Logger
	// Registerer receives cairn_http_accept_errors_total,
	// cairn_http_connections_refused_total and cairn_http_open_connections
	// (nil: none).
	Registerer prometheus.Registerer
	// MinBackoff and MaxBackoff bound the wait before the next Accept
	// after a failed one (defaults 5ms and 1s, as net/http).
	MinBackoff, MaxBackoff time.Duration
	// LogEvery is the least time between two log lines about failed
	// accepts, or about refused connections (default 10s); the metrics
	// count every one.
	LogEvery time.Duration
}

// WithDefaults fills unset fields.
func (c ListenerConfig) WithDefaults() ListenerConfig {
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns()
	}
	if c.MaxConnsPerIP == 0 {
		c.MaxConnsPerIP = DefaultMaxConnsPerIP(c.MaxConns)
	}
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

// Validate reports every problem at once.
func (c ListenerConfig) Validate() error {
	var errs []error
	if c.MaxConns < 0 {
		errs = append(errs, fmt.Errorf("http max conns %d: must not be negative", c.MaxConns))
	}
	if c.MaxConnsPerIP < 0 {
		errs = append(errs, fmt.Errorf("http max conns per ip %d: must not be negative", c.MaxConnsPerIP))
	}
	return errors.Join(errs...)
}

// NewListener wraps ln with the connection limits and so that a failed
// Accept for want of resources (EMFILE, ENFILE, ENOBUFS, ENOMEM, an
// aborted connection...) is retried after a backoff instead of returned:
// fasthttp, like any server loop, stops serving for good on the first
// error Accept returns. Accept only returns an error once ln is closed or
// broken beyond repair (EBADF, EINVAL, ENOTSOCK).
//
// A connection over a limit is answered at once (a canned 503 or 429
// problem+json) and closed in Accept: nothing waits for a free slot, and
// the server never sees it. The limits are here rather than fasthttp's
// (Server.MaxConnsPerIP counts IPv4 clients only, and its connection
// wrapper is closed twice, racing, at shutdown in the fasthttp version
// fiber v2 pins; golang.org/x/net/netutil.LimitListener queues
// connections over its limit instead of refusing them).
func NewListener(ln net.Listener, cfg ListenerConfig) (net.Listener, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := &backoff.ExponentialBackOff{
		InitialInterval: cfg.MinBackoff,
		Multiplier:      2,
		MaxInterval:     cfg.MaxBackoff,
		Clock:           backoff.SystemClock,
	}
	b.Reset()
	m := listenerMetricsFor(cfg.Registerer)
	labels := prometheus.Labels{"listener": cfg.Name}
	l := &limitListener{
		Listener:   ln,
		cfg:        cfg,
		backoff:    b,
		errors:     m.acceptErrors.MustCurryWith(labels),
		refused:    m.refused.MustCurryWith(labels),
		open:       m.open.With(labels),
		errorLogs:  &rate.Sometimes{First: 1, Interval: cfg.LogEvery},
		refuseLogs: &rate.Sometimes{First: 1, Interval: cfg.LogEvery},
		perIP:      map[netip.Prefix]int{},
	}
	return l, nil
}

type limitListener struct {
	net.Listener
	cfg ListenerConfig
	// backoffMu guards backoff: Accept may be called concurrently.
	backoffMu sync.Mutex
	backoff   *backoff.ExponentialBackOff
	errors    *prometheus.CounterVec
	refused   *prometheus.CounterVec
	open      prometheus.Gauge
	// errorLogs and refuseLogs rate-limit the log lines.
	errorLogs, refuseLogs *rate.Sometimes

	mu    sync.Mutex
	total int                  // connections open
	perIP map[netip.Prefix]int // connections open by client
}

// Accept returns the next connection within the limits, refusing those
// over them, and retries failed accepts until ln is closed.
func (l *limitListener) Accept() (net.Conn, error) {
	failed := 0 // accepts failed since the last success
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !retryable(err) {
				return nil, err
			}
			failed++
			l.errors.WithLabelValues(acceptErrorReason(err)).Inc()
			l.backoffMu.Lock()
			wait := l.backoff.NextBackOff()
			l.backoffMu.Unlock()
			l.errorLogs.Do(func() {
				l.cfg.Logger.Warn("accepting a connection failed; retrying", "listener", l.cfg.Name, "err", err,
					"failed_in_a_row", failed, "retry_in", wait)
			})
			time.Sleep(wait)
			continue
		}
		if failed > 0 {
			l.backoffMu.Lock()
			l.backoff.Reset()
			l.backoffMu.Unlock()
			failed = 0
		}
		if lc := l.admit(c); lc != nil {
			return lc, nil
		}
	}
}

// Canned answers to connections over a limit, written without parsing
// their request.
var (
	overGlobal = cannedProblem(http.StatusServiceUnavailable, "the server has as many connections as it may serve; try again later")
	overPerIP  = cannedProblem(http.StatusTooManyRequests, "too many connections from your address; close some and try again")
)

// admit counts c in, or answers and closes it when it is over a limit.
func (l *limitListener) admit(c net.Conn) net.Conn {
	client := clientOf(c.RemoteAddr())
	l.mu.Lock()
	var refusal []byte
	var limit string
	switch {
	case l.total >= l.cfg.MaxConns:
		refusal, limit = overGlobal, "global"
	case client.IsValid() && l.perIP[client] >= l.cfg.MaxConnsPerIP:
		refusal, limit = overPerIP, "per_ip"
	default:
		l.total++
		if client.IsValid() {
			l.perIP[client]++
		}
	}
	l.mu.Unlock()
	if refusal == nil {
		l.open.Inc()
		return &limitedConn{Conn: c, l: l, client: client}
	}
	l.refused.WithLabelValues(limit).Inc()
	l.refuseLogs.Do(func() {
		l.cfg.Logger.Warn("refusing connections over a limit", "listener", l.cfg.Name, "limit", limit, "client", client.String(),
			"max_conns", l.cfg.MaxConns, "max_conns_per_ip", l.cfg.MaxConnsPerIP)
	})
	// A fresh socket's send buffer takes the answer at once; the deadline
	// only guards against the unexpected.
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = c.Write(refusal)
	_ = c.Close()
	return nil
}

func (l *limitListener) release(client netip.Prefix) {
	l.mu.Lock()
	l.total--
	if client.IsValid() {
		if l.perIP[client]--; l.perIP[client] <= 0 {
			delete(l.perIP, client)
		}
	}
	l.mu.Unlock()
	l.open.Dec()
}

// limitedConn gives its slot back once, however often it is closed
// (fasthttp may close a connection twice at shutdown).
type limitedConn struct {
	net.Conn
	l      *limitListener
	client netip.Prefix
	closed atomic.Bool
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.l.release(c.client)
	}
	return err
}

// clientOf is the client a connection counts against: its IPv4 address,
// or its IPv6 /64 (one machine, or one customer, usually has a whole
// one); invalid when the address is not TCP.
func clientOf(addr net.Addr) netip.Prefix {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return netip.Prefix{}
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return netip.Prefix{}
	}
	ip = ip.Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, err := ip.Prefix(bits)
	if err != nil {
		return netip.Prefix{}
	}
	return p
}

func cannedProblem(status int, detail string) []byte {
	kind := kindForStatus(status).String()
	body, err := json.Marshal(Problem{Type: "https://cairn.dev/problems/" + kind, Title: http.StatusText(status), Status: status, Detail: detail, Kind: kind})
	if err != nil {
		panic(err) // a Problem always marshals
	}
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), ProblemContentType, len(body), body)
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

// listenerMetrics are the listeners' metrics, registered once per
// registry: several listeners (the audited and the unaudited API) share
// them, told apart by the listener label.
type listenerMetrics struct {
	acceptErrors *prometheus.CounterVec
	refused      *prometheus.CounterVec
	open         *prometheus.GaugeVec
}

func listenerMetricsFor(reg prometheus.Registerer) listenerMetrics {
	return listenerMetrics{
		acceptErrors: registerOrReuse(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_http_accept_errors_total",
			Help: "Failed accepts of HTTP connections, retried after a backoff, by listener and reason (EMFILE: out of file descriptors).",
		}, []string{"listener", "reason"})),
		refused: registerOrReuse(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_http_connections_refused_total",
			Help: "HTTP connections answered 503 (limit global) or 429 (limit per_ip) and closed at once, by listener and limit.",
		}, []string{"listener", "limit"})),
		open: registerOrReuse(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cairn_http_open_connections",
			Help: "HTTP connections open now, by listener.",
		}, []string{"listener"})),
	}
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
