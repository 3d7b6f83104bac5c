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

	"github.com/cairnhq/cairn/domain"
)

// Config of the HTTP server.
type Config struct {
	// BodyLimit is the largest request body accepted (413 above it).
	BodyLimit int
	// ReadTimeout and WriteTimeout bound one request.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	Logger       *slog.Logger
	// Registerer receives the HTTP metrics (nil: none).
	Registerer prometheus.Registerer
	// StreamRequestBody, when set, tells the requests whose handler reads
	// the body as a stream (c.Context().RequestBodyStream()), however long
	// it is: file uploads. Every other request's body is still read whole
	// and refused above BodyLimit (413), as without it.
	StreamRequestBody func(c *fiber.Ctx) bool
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.BodyLimit == 0 {
		c.BodyLimit = 1 << 20
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = 30 * time.Second
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 5 * time.Minute
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
	if c.ReadTimeout < 0 || c.WriteTimeout < 0 {
		errs = append(errs, errors.New("http timeouts must not be negative"))
	}
	return errors.Join(errs...)
}

// New returns a fiber app with Cairn's middleware: recover, request id,
// access log, metrics, problem+json errors, body limit.
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
		ErrorHandler:          ErrorHandler(cfg.Logger),
		DisableStartupMessage: true,
		StreamRequestBody:     cfg.StreamRequestBody != nil,
	})
	app.Use(recover.New())
	app.Use(requestIDMiddleware)
	if cfg.StreamRequestBody != nil {
		app.Use(limitBody(cfg.BodyLimit, cfg.StreamRequestBody))
	}
	m := newMetrics(cfg.Registerer)
	app.Use(func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		status := c.Response().StatusCode()
		if err != nil {
			status = ProblemFor(err).Status
		}
		route := c.Route().Path
		m.observe(c.Method(), route, status, time.Since(start))
		cfg.Logger.Debug("http request", "request_id", RequestID(c), "method", c.Method(), "path", c.Path(), "status", status, "duration", time.Since(start))
		return err
	})
	return app, nil
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
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_http_requests_total", Help: "HTTP requests by method, route and status."}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cairn_http_request_duration_seconds", Help: "HTTP request latency by method and route.", Buckets: prometheus.DefBuckets}, []string{"method", "route"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration)
	}
	return m
}

func (m *metrics) observe(method, route string, status int, d time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(d.Seconds())
}

// NotFound is the catch-all route's answer.
func NotFound(c *fiber.Ctx) error {
	return domain.Errorf("", domain.KindNotFound, "no route %s %s", c.Method(), c.Path())
}
