package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/cairnhq/cairn/domain"
)

// Config of the HTTP server.
type Config struct {
	// BodyLimit is the largest request body accepted (413 above it).
	BodyLimit int
	// ReadTimeout bounds the reading of a request's header and of a body
	// read whole (every request but streamed uploads): a total deadline
	// from the request's first byte (default 30s).
	ReadTimeout time.Duration
	// WriteTimeout bounds the writing of one response (default 5m).
	WriteTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a keep-alive
	// connection (default 2m).
	IdleTimeout time.Duration
	// BodyIdleTimeout bounds the wait for progress of a streamed request
	// body (StreamRequestBody): an upload may take any time as long as no
	// read of it waits longer than this for bytes; a stalled one is cut
	// with 408 (default 60s).
	BodyIdleTimeout time.Duration
	Logger          *slog.Logger
	// Registerer receives the HTTP metrics (nil: none).
	Registerer prometheus.Registerer
	// StreamRequestBody, when set, tells the requests whose handler reads
	// the body as a stream (c.Context().RequestBodyStream()), however long
	// it is: file uploads. Every other request's body is still read whole
	// and refused above BodyLimit (413), as without it.
	StreamRequestBody func(c *fiber.Ctx) bool
}

// Defaults of the timeouts Config.WithDefaults sets.
const (
	DefaultReadTimeout     = 30 * time.Second
	DefaultWriteTimeout    = 5 * time.Minute
	DefaultIdleTimeout     = 2 * time.Minute
	DefaultBodyIdleTimeout = 60 * time.Second
)

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.BodyLimit == 0 {
		c.BodyLimit = 1 << 20
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.BodyIdleTimeout == 0 {
		c.BodyIdleTimeout = DefaultBodyIdleTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if c.BodyLimit < 1024 {
		errs = append(errs, fmt.Errorf("http body limit %d: must be at least 1024 bytes", c.BodyLimit))
	}
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"read timeout", c.ReadTimeout}, {"write timeout", c.WriteTimeout}, {"idle timeout", c.IdleTimeout}, {"body idle timeout", c.BodyIdleTimeout}} {
		if t.d < 0 {
			errs = append(errs, fmt.Errorf("http %s %s: must not be negative", t.name, t.d))
		}
	}
	return errors.Join(errs...)
}

// New returns a fiber app with Cairn's middleware: recover, request id,
// access log, metrics, problem+json errors, body limit, idle timeout of
// streamed bodies; and the timeouts of its server. Serve it on a listener
// from NewListener, which holds the connection limits.
func New(cfg Config) (*fiber.App, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	app := fiber.New(fiber.Config{
		AppName:               "cairn",
		BodyLimit:             cfg.BodyLimit,
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.WriteTimeout,
		IdleTimeout:           cfg.IdleTimeout,
		ErrorHandler:          ErrorHandler(cfg.Logger),
		DisableStartupMessage: true,
		StreamRequestBody:     cfg.StreamRequestBody != nil,
	})
	app.Server().Logger = &fasthttpLogger{log: cfg.Logger, every: rate.Sometimes{First: 1, Interval: 10 * time.Second}}
	m := newMetrics(cfg.Registerer)
	app.Use(recover.New())
	app.Use(requestIDMiddleware)
	app.Use(func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		status := c.Response().StatusCode()
		if err != nil {
			status = ProblemFor(err).Status
		}
		route := c.Route().Path
		method := methodLabel(c.Method())
		m.observe(method, route, status, time.Since(start))
		cfg.Logger.Debug("http request", "request_id", RequestID(c), "method", method, "path", c.Path(), "status", status, "duration", time.Since(start))
		return err
	})
	if cfg.StreamRequestBody != nil {
		app.Use(limitBody(cfg.BodyLimit, cfg.StreamRequestBody, cfg.BodyIdleTimeout, m.bodyStalls))
	}
	return app, nil
}

// fasthttpLogger sends fasthttp's own messages (a connection that failed
// other than by timeout or reset...) to slog, at most one every 10s: a
// client sending garbage on many connections must not flood the log.
type fasthttpLogger struct {
	log   *slog.Logger
	every rate.Sometimes
}

func (l *fasthttpLogger) Printf(format string, args ...any) {
	l.every.Do(func() { l.log.Warn("http server: " + fmt.Sprintf(format, args...)) })
}

const requestIDKey = "cairn.request_id"

// HeaderRequestID carries the request id in and out.
const HeaderRequestID = "X-Request-ID"

func requestIDMiddleware(c *fiber.Ctx) error {
	id := c.Get(HeaderRequestID)
	if id == "" || len(id) > 128 {
		var b [12]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	c.Locals(requestIDKey, id)
	c.Set(HeaderRequestID, id)
	return c.Next()
}

// RequestID returns the request's id.
func RequestID(c *fiber.Ctx) string {
	id, _ := c.Locals(requestIDKey).(string)
	return id
}

type metrics struct {
	requests   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	bodyStalls prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_http_requests_total", Help: "HTTP requests by method, route and status."}, []string{"method", "route", "status"}),
		duration:   prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cairn_http_request_duration_seconds", Help: "HTTP request latency by method and route.", Buckets: prometheus.DefBuckets}, []string{"method", "route"}),
		bodyStalls: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_http_body_stalls_total", Help: "Streamed request bodies (uploads) cut because no byte came for the body idle timeout."}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration, m.bodyStalls)
	}
	return m
}

// methodLabel returns a constant string for the request's method.
// fiber's c.Method() is a view of a buffer the next request on the
// connection reuses, so keeping it (as a metric label) would later read
// as another method ("GETETE"), and a label set changed behind the
// registry's back makes /metrics fail. Unknown methods share "OTHER",
// which also bounds the label's values.
func methodLabel(m string) string {
	for _, known := range [...]string{fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut,
		fiber.MethodPatch, fiber.MethodDelete, fiber.MethodOptions, fiber.MethodConnect, fiber.MethodTrace} {
		if m == known {
			return known
		}
	}
	return "OTHER"
}

func (m *metrics) observe(method, route string, status int, d time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(d.Seconds())
}

// NotFound is the catch-all route's answer.
func NotFound(c *fiber.Ctx) error {
	return domain.Errorf("", domain.KindNotFound, "no route %s %s", c.Method(), c.Path())
}
