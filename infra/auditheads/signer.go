package auditheads

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/domain/audit"
)

// Defaults of Config.
const (
	DefaultEvery    = 1000
	DefaultInterval = time.Minute
	DefaultQueue    = 256
	// DefaultRetryFor is how long a sink retries one head before it drops
	// it (a newer head anchors everything the dropped one did).
	DefaultRetryFor = time.Minute
	// DefaultDrainTimeout is how long the sinks may take, once Run's
	// context ends, to publish the heads still queued.
	DefaultDrainTimeout = 5 * time.Second
)

// Config configures a Signer.
type Config struct {
	// Key signs the heads (LoadKey).
	Key ed25519.PrivateKey
	// Sinks receive every signed head (ParseSink); at least one.
	Sinks []Sink
	// Every: a head is signed as soon as the chain has grown by this
	// many records since the last signed head (default DefaultEvery).
	Every uint64
	// Interval: a head is signed at least this often while the chain
	// grows (default DefaultInterval).
	Interval time.Duration
	// Queue bounds each sink's heads waiting to be published; when full,
	// the oldest is dropped (default DefaultQueue).
	Queue int
	// RetryFor bounds the retries of one head by one sink (default
	// DefaultRetryFor).
	RetryFor time.Duration
	// DrainTimeout bounds the publishing of queued heads at shutdown
	// (default DefaultDrainTimeout).
	DrainTimeout time.Duration
	// Now is the clock heads are signed with (default time.Now).
	Now func() time.Time
	// Logger receives the logs (default slog.Default()).
	Logger *slog.Logger
	// Registerer receives the metrics (none when nil).
	Registerer prometheus.Registerer
}

// Validate reports every problem of the configuration.
func (c Config) Validate() error {
	var errs []error
	if len(c.Key) != ed25519.PrivateKeySize {
		errs = append(errs, errors.New("auditheads: no signing key"))
	}
	if len(c.Sinks) == 0 {
		errs = append(errs, errors.New("auditheads: no sink to publish signed heads to"))
	}
	if c.Interval < 0 || c.RetryFor < 0 || c.DrainTimeout < 0 {
		errs = append(errs, errors.New("auditheads: durations must not be negative"))
	}
	if c.Queue < 0 {
		errs = append(errs, fmt.Errorf("auditheads: queue %d must not be negative", c.Queue))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.Every == 0 {
		c.Every = DefaultEvery
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Queue == 0 {
		c.Queue = DefaultQueue
	}
	if c.RetryFor == 0 {
		c.RetryFor = DefaultRetryFor
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Signer signs the chain's head and publishes it (see the package
// documentation). Observe is safe to call from any goroutine; Run does the
// signing and publishing.
type Signer struct {
	cfg   Config
	log   *slog.Logger
	keyID string

	mu       sync.Mutex
	observed audit.Head       // the chain's head as last reported
	latest   audit.SignedHead // the last head signed
	signed   bool             // latest is set
	wake     chan struct{}

	signedSeq prometheus.Gauge
	published *prometheus.CounterVec
	errors    *prometheus.CounterVec
}

// New builds a signer. The last head already in the first file sink, if it
// verifies under the key, is Latest until a new one is signed.
func New(cfg Config) (*Signer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	pub := cfg.Key.Public().(ed25519.PublicKey)
	s := &Signer{cfg: cfg, keyID: audit.KeyID(pub), wake: make(chan struct{}, 1),
		log: cfg.Logger.With("component", "audit-head-signer"),
		signedSeq: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_audit_head_signed_seq",
			Help: "Seq of the last audit chain head this process signed."}),
		published: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_audit_heads_published_total",
			Help: "Signed audit heads published, by sink."}, []string{"sink"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_audit_head_sink_errors_total",
			Help: "Failed attempts to publish a signed audit head, and heads dropped, by sink."}, []string{"sink"}),
	}
	for _, sink := range cfg.Sinks {
		s.published.WithLabelValues(sink.Name())
		s.errors.WithLabelValues(sink.Name())
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{s.signedSeq, s.published, s.errors} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("auditheads: metrics: %w", err)
			}
		}
	}
	s.recall(pub)
	return s, nil
}

// recall takes the last head of the first file sink as the latest, so a
// restart keeps answering it and does not sign the same head again.
func (s *Signer) recall(pub ed25519.PublicKey) {
	for _, sink := range s.cfg.Sinks {
		fs, ok := sink.(*fileSink)
		if !ok {
			continue
		}
		last, err := lastLine(fs.path)
		if err != nil || last == nil {
			return
		}
		h, err := audit.ParseSignedHead(last)
		if err == nil {
			err = audit.Keyring{s.keyID: pub}.Verify(h)
		}
		if err != nil {
			s.log.Warn("the last head of the heads file is not one this key signed; it is not taken as the latest", slog.String("sink", fs.Name()), slog.Any("error", err))
			return
		}
		s.latest, s.signed, s.observed = h, true, h.Head()
		s.signedSeq.Set(float64(h.Seq))
		return
	}
}

// lastLine is the last non-empty line of the file at path (nil when it
// has none or does not exist).
func lastLine(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const tail = 4096 // a head's line is about 250 bytes
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		if _, err := f.Seek(fi.Size()-tail, 0); err != nil {
			return nil, err
		}
	}
	var last []byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			last = append(last[:0], line...)
		}
	}
	return last, sc.Err()
}

// KeyID is the id of the signing key (heads name it).
func (s *Signer) KeyID() string { return s.keyID }

// Observe reports the chain's head after a sealed run (the sequencer's
// OnSealed). It never blocks.
func (s *Signer) Observe(h audit.Head) {
	s.mu.Lock()
	if h.Seq > s.observed.Seq {
		s.observed = h
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Latest is the last head signed (false before the first).
func (s *Signer) Latest() (audit.SignedHead, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest, s.signed
}

// due is the head to sign now, if any: the chain has grown by Every
// records since the last signed head, or (on a tick) has moved at all.
func (s *Signer) due(tick bool) (audit.Head, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last uint64
	if s.signed {
		last = s.latest.Seq
	}
	h := s.observed
	if h.Seq <= last || (!tick && h.Seq-last < s.cfg.Every) {
		return audit.Head{}, false
	}
	return h, true
}

func (s *Signer) sign(h audit.Head) []byte {
	sh := audit.SignHead(s.cfg.Key, h, s.cfg.Now())
	s.mu.Lock()
	s.latest, s.signed = sh, true
	s.mu.Unlock()
	s.signedSeq.Set(float64(h.Seq))
	return sh.AppendJSON(nil)
}

// Run signs and publishes heads until ctx ends; then it signs the head
// if it moved, and gives the sinks DrainTimeout to publish what is queued.
func (s *Signer) Run(ctx context.Context) error {
	work, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	queues := make([]chan []byte, len(s.cfg.Sinks))
	var wg sync.WaitGroup
	for i, sink := range s.cfg.Sinks {
		queues[i] = make(chan []byte, s.cfg.Queue)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.publishAll(work, sink, queues[i])
		}()
	}
	publish := func(h audit.Head) {
		line := s.sign(h)
		for i, q := range queues {
			s.enqueue(s.cfg.Sinks[i], q, line)
		}
	}
	s.log.Info("signing the audit chain's head", slog.String("key_id", s.keyID), slog.Uint64("every", s.cfg.Every),
		slog.Duration("interval", s.cfg.Interval), slog.Any("sinks", s.sinkNames()))
	tick := time.NewTicker(s.cfg.Interval)
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-s.wake:
			if h, ok := s.due(false); ok {
				publish(h)
			}
		case <-tick.C:
			if h, ok := s.due(true); ok {
				publish(h)
			}
		}
	}
	if h, ok := s.due(true); ok {
		publish(h)
	}
	for _, q := range queues {
		close(q)
	}
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	t := time.NewTimer(s.cfg.DrainTimeout)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
		s.log.Warn("signed heads still queued at shutdown were not published", slog.Duration("drain_timeout", s.cfg.DrainTimeout))
		stop()
		<-drained
	}
	var errs []error
	for _, sink := range s.cfg.Sinks {
		if err := sink.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", sink.Name(), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		s.log.Warn("closing the audit head sinks", slog.Any("error", err))
	}
	return nil
}

func (s *Signer) sinkNames() []string {
	names := make([]string, len(s.cfg.Sinks))
	for i, sink := range s.cfg.Sinks {
		names[i] = sink.Name()
	}
	return names
}

// enqueue queues line for sink, dropping the oldest head when the queue
// is full (Run is the only sender, so there is room after one receive).
func (s *Signer) enqueue(sink Sink, q chan []byte, line []byte) {
	select {
	case q <- line:
		return
	default:
	}
	select {
	case <-q:
		s.errors.WithLabelValues(sink.Name()).Inc()
		s.log.Warn("audit head sink is behind: dropped its oldest queued head", slog.String("sink", sink.Name()))
	default:
	}
	q <- line
}

// publishAll publishes the heads of q to sink, each retried with backoff
// for up to RetryFor.
func (s *Signer) publishAll(ctx context.Context, sink Sink, q <-chan []byte) {
	name := sink.Name()
	for line := range q {
		b := backoff.NewExponentialBackOff(backoff.WithInitialInterval(100*time.Millisecond),
			backoff.WithMaxInterval(10*time.Second), backoff.WithMaxElapsedTime(s.cfg.RetryFor))
		err := backoff.RetryNotify(func() error { return sink.Publish(ctx, line) }, backoff.WithContext(b, ctx),
			func(err error, wait time.Duration) {
				s.errors.WithLabelValues(name).Inc()
				s.log.Warn("publishing a signed audit head failed; retrying", slog.String("sink", name), slog.Any("error", err), slog.Duration("retry_in", wait))
			})
		if err != nil {
			s.errors.WithLabelValues(name).Inc()
			s.log.Error("a signed audit head was not published to a sink", slog.String("sink", name), slog.Any("error", err))
			continue
		}
		s.published.WithLabelValues(name).Inc()
	}
}
