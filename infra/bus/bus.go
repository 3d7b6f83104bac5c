package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairnhq/cairn/domain"
)

// Bus is a connection to the message bus: it publishes messages and runs
// handlers on durable consumers. It is safe for concurrent use.
type Bus struct {
	cfg   Config
	log   *slog.Logger
	wmLog watermill.LoggerAdapter
	nc    *nats.Conn
	js    jetstream.JetStream

	mu      sync.Mutex
	closed  bool
	closing chan struct{}  // closed by Close: every Handle stops
	active  sync.WaitGroup // running Publish and Handle calls
}

// ErrClosed is returned by Publish and Handle on a closed Bus. It is
// domain.ErrUnavailable.
var ErrClosed = &domain.Error{Op: "bus", Kind: domain.KindUnavailable, Message: "bus is closed"}

// Connect validates cfg, connects to the NATS server at cfg.URL, checks
// that it has JetStream and accepts messages of MaxMessageSize, and creates
// or updates the streams (unless cfg.SkipProvisioning). A nil logger means
// slog.Default(). A server that cannot be reached is domain.ErrUnavailable;
// a bad config or a server that is configured wrongly is
// domain.ErrInvalid.
func Connect(ctx context.Context, cfg Config, logger *slog.Logger) (*Bus, error) {
	const op = "bus.connect"
	if err := cfg.Validate(); err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindInvalid, Err: err}
	}
	cfg = cfg.WithDefaults()
	if logger == nil {
		logger = slog.Default()
	}
	log := logger.With("component", "bus")

	nc, err := connect(ctx, cfg, log, cfg.ClientName)
	if err != nil {
		return nil, err
	}
	b := &Bus{
		cfg:     cfg,
		log:     log,
		wmLog:   newWatermillLogger(log),
		nc:      nc,
		closing: make(chan struct{}),
	}
	if err := b.setup(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	log.Info("bus connected", "server", nc.ConnectedServerName(), "max_payload", nc.MaxPayload(), "config", cfg.logValue())
	return b, nil
}

// setup checks the server and provisions the streams.
func (b *Bus) setup(ctx context.Context) error {
	const op = "bus.connect"
	if max := b.nc.MaxPayload(); max < MaxMessageSize {
		return domain.Errorf(op, domain.KindInvalid,
			"NATS server %s accepts messages of at most %d bytes (max_payload); Cairn needs %d: set max_payload: 4MB in its configuration",
			b.nc.ConnectedUrlRedacted(), max, MaxMessageSize)
	}
	js, err := jetstream.New(b.nc)
	if err != nil {
		return &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
	}
	b.js = js
	if b.cfg.AgentID != "" {
		// An agent may not read account information nor touch streams.
		return nil
	}
	if _, err := js.AccountInfo(ctx); err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return &domain.Error{Op: op, Kind: domain.KindInvalid, Message: "JetStream is not enabled on the NATS server (start it with -js)", Err: err}
		}
		return unavailable(op, err)
	}
	if b.cfg.SkipProvisioning {
		return nil
	}
	for _, sc := range b.streamConfigs() {
		if _, err := js.CreateOrUpdateStream(ctx, sc); err != nil {
			// JetStream writes a stream's settings even when they do not
			// change: on a full disk an existing stream cannot be updated
			// but still serves, so start with it as it is.
			if _, lerr := js.Stream(ctx, sc.Name); lerr == nil {
				b.log.Warn("cannot update the stream's settings; using it as it is", "stream", sc.Name, "error", err)
				continue
			}
			return unavailable(op, fmt.Errorf("create or update stream %s: %w", sc.Name, err))
		}
	}
	return nil
}

// streamConfigs are the streams Cairn's topics live in: one per family of
// topics, so each keeps its messages as long as it needs.
func (b *Bus) streamConfigs() []jetstream.StreamConfig {
	base := jetstream.StreamConfig{
		Retention:  jetstream.LimitsPolicy,
		Discard:    jetstream.DiscardOld,
		Storage:    jetstream.FileStorage,
		Replicas:   b.cfg.Replicas,
		MaxMsgSize: MaxMessageSize,
		Duplicates: b.cfg.DuplicateWindow,
		MaxMsgs:    -1,
		MaxBytes:   -1,
	}
	agents, reports := base, base
	agents.Name, agents.Subjects, agents.MaxAge = AgentsStream, []string{agentTopicPrefix + "*"}, b.cfg.AgentMaxAge
	agents.Description = "Cairn: events for agents (allocations), one subject per agent"
	reports.Name, reports.Subjects, reports.MaxAge = ReportsStream, []string{ReportsTopic}, b.cfg.ReportMaxAge
	reports.Description = "Cairn: reports from agents (kernel lifecycle, heartbeats)"
	return []jetstream.StreamConfig{agents, reports}
}

// connect opens one NATS connection named name, with reconnection forever
// and connection events logged.
func connect(ctx context.Context, cfg Config, log *slog.Logger, name string, extra ...nats.Option) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(name),
		nats.Timeout(cfg.ConnectTimeout),
		nats.DrainTimeout(cfg.DrainTimeout),
		nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if err != nil {
				log.Warn("bus connection lost, reconnecting", "connection", name, "error", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("bus connection restored", "connection", name, "url", nc.ConnectedUrlRedacted())
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			attrs := []any{"connection", name, "error", err}
			if sub != nil {
				attrs = append(attrs, "subject", sub.Subject)
			}
			log.Error("bus connection error", attrs...)
		}),
	}
	if cfg.CredentialsFile != "" {
		opts = append(opts, nats.UserCredentials(cfg.CredentialsFile))
	}
	if cfg.CAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.CAFile))
	}
	if cfg.AgentID != "" {
		opts = append(opts, nats.CustomInboxPrefix(AgentInboxPrefix(cfg.AgentID)))
	} else if cfg.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(cfg.InboxPrefix))
	}
	opts = append(opts, extra...)
	// nats.Connect takes no context: dial in the background and give up
	// waiting (closing the connection if it arrives late) when ctx ends.
	type result struct {
		nc  *nats.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := nats.Connect(cfg.URL, opts...)
		done <- result{nc, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, unavailable("bus.connect", fmt.Errorf("connect to %s: %w", cfg.redactedURL(), r.err))
		}
		return r.nc, nil
	case <-ctx.Done():
		go func() {
			if r := <-done; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, &domain.Error{Op: "bus.connect", Kind: domain.KindUnavailable, Err: ctx.Err()}
	}
}

func unavailable(op string, err error) error {
	return &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
}

// acquire registers a Publish or Handle call; false when the Bus is closed.
func (b *Bus) acquire() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.active.Add(1)
	return true
}

// Close stops every Handle (each drains its in-flight messages, see
// Handle), waits for running Publish calls, flushes and closes the
// connection. It is safe to call more than once; later calls return nil.
func (b *Bus) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	close(b.closing)
	b.mu.Unlock()

	b.active.Wait()
	err := b.nc.FlushTimeout(b.cfg.DrainTimeout)
	b.nc.Close()
	b.log.Info("bus closed")
	if err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		return unavailable("bus.close", fmt.Errorf("flush: %w", err))
	}
	return nil
}

// Connected reports whether the connection to the NATS server is up now
// (it reconnects on its own when it is not).
func (b *Bus) Connected() bool { return b.nc.IsConnected() }
