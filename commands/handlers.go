package commands

import (
	"errors"
	"fmt"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// Handlers lists every command handler. Build it with NewHandlers.
type Handlers struct {
	RequestSession        Handler[RequestSession, RequestSessionResult]
	TerminateSession      Handler[TerminateSession, Result]
	CancelPendingSession  Handler[CancelPendingSession, Result]
	UpdatePendingSession  Handler[UpdatePendingSession, Result]
	ScheduleSession       Handler[ScheduleSession, Result]
	RegisterAgent         Handler[RegisterAgent, Result]
	ReportKernelStatus    Handler[ReportKernelStatus, Result]
	MarkAgentLost         Handler[MarkAgentLost, Result]
	ReleaseAllocation     Handler[ReleaseAllocation, Result]
	ForceTerminateSession Handler[ForceTerminateSession, Result]

	names []string
}

// Names returns the registered command names, in registration order.
func (h *Handlers) Names() []string { return append([]string(nil), h.names...) }

// Defaults applied by Options.WithDefaults.
const (
	DefaultMaxAttempts = 8
	DefaultBackoff     = 2 * time.Millisecond
	DefaultMaxBackoff  = 100 * time.Millisecond
)

// Options tune the handlers. The zero value is valid: every zero field
// takes its default.
type Options struct {
	// MaxAttempts bounds the load-decide-append attempts of one command
	// when its appends keep meeting concurrent writers (default 8: with
	// the default backoff, 16 writers racing for one agent all get through
	// on this project's 2-core machine, where 5 attempts let some give up).
	MaxAttempts int
	// Backoff is the ceiling of the random wait after the first conflict;
	// it doubles with every attempt up to MaxBackoff (defaults 2ms, 100ms).
	Backoff    time.Duration
	MaxBackoff time.Duration
	// NewID makes session and kernel ids (default: UUIDv7).
	NewID func() uuid.UUID
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.MaxAttempts == 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.Backoff == 0 {
		o.Backoff = DefaultBackoff
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.NewID == nil {
		o.NewID = newUUIDv7
	}
	return o
}

// Validate reports every problem of o at once.
func (o Options) Validate() error {
	var errs []error
	if o.MaxAttempts < 0 || o.MaxAttempts > 100 {
		errs = append(errs, fmt.Errorf("max attempts %d: must be between 1 and 100", o.MaxAttempts))
	}
	if o.Backoff < 0 || o.MaxBackoff < 0 {
		errs = append(errs, fmt.Errorf("backoff %v / max backoff %v: must not be negative", o.Backoff, o.MaxBackoff))
	}
	return errors.Join(errs...)
}

// NewHandlers builds every handler over one store and one clock. It
// refuses a nil store or clock, invalid options, and two handlers for one
// command name.
func NewHandlers(store EventStore, clock func() time.Time, opts Options) (*Handlers, error) {
	var errs []error
	if store == nil {
		errs = append(errs, errors.New("commands: no event store"))
	}
	if clock == nil {
		errs = append(errs, errors.New("commands: no clock"))
	}
	if err := opts.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("commands: %w", err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	opts = opts.WithDefaults()
	retry := retryPolicy{attempts: opts.MaxAttempts, backoff: opts.Backoff, maxBackoff: opts.MaxBackoff}
	d := deps{
		sessions: repository[*domain.Session]{store: store, rehydrate: domain.RehydrateSession, retry: retry},
		agents:   repository[*domain.Agent]{store: store, rehydrate: domain.RehydrateAgent, retry: retry},
		clock:    clock,
		newID:    opts.NewID,
	}
	r := newRegistry()
	h := &Handlers{
		RequestSession:        register(r, requestSessionHandler{d}),
		TerminateSession:      register(r, terminateSessionHandler{d}),
		CancelPendingSession:  register(r, cancelPendingSessionHandler{d}),
		UpdatePendingSession:  register(r, updatePendingSessionHandler{d}),
		ScheduleSession:       register(r, scheduleSessionHandler{d}),
		RegisterAgent:         register(r, registerAgentHandler{d}),
		ReportKernelStatus:    register(r, reportKernelStatusHandler{d}),
		MarkAgentLost:         register(r, markAgentLostHandler{d}),
		ReleaseAllocation:     register(r, releaseAllocationHandler{d}),
		ForceTerminateSession: register(r, forceTerminateSessionHandler{d}),
	}
	if len(r.errs) > 0 {
		return nil, errors.Join(r.errs...)
	}
	h.names = r.names
	return h, nil
}

// deps is what every handler works with.
type deps struct {
	sessions repository[*domain.Session]
	agents   repository[*domain.Agent]
	clock    func() time.Time
	newID    func() uuid.UUID
}

// now reads the clock once per command, in UTC without a monotonic part,
// so the time stored is the time folded back.
func (d deps) now() time.Time { return d.clock().UTC() }

func newUUIDv7() uuid.UUID {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.New()
	}
	return id
}
