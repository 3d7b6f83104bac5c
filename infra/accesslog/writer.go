// Package accesslog records every API request in the audit trail
// (docs/architecture.md, the audit trail): a fiber middleware builds each request's
// access record, and either hands it to the command the request runs
// (Access puts it in the command's Metadata: the record is appended with
// the command's events)
// or, for reads, refusals and failures, queues it for the Writer, which
// appends queued records to the access-log stream in batches (one
// access.batch-logged event per group commit). The audit
// sequencer (commands/auditseq) chains both kinds.
//
// # Crash window
//
// A mutating request's record is stored with its events or not at all. A
// queued record is stored when the Writer's next append commits: a crash
// loses at most the records queued and not yet appended (one batch, up to
// an interval of reads). The response of such a request has already been
// sent. Under load the Writer appends once per Config.Interval (50ms by
// default), so the window is that interval plus one append. A full queue
// makes requests wait for room (backpressure) rather than drop records.
//
// # A store that takes no writes
//
// When appends fail (a full disk: eventstore.ErrStorageFull) the Writer
// keeps the batch in memory and retries it with back-off, for as long as
// it takes; the queue keeps filling meanwhile. Once it is full and stays
// full for Config.FullWait, a request is refused with 503 (KindUnavailable)
// before its handler runs, and a request already handled whose record finds
// no room is answered 503 instead of its own answer: the API stops
// answering rather than answer without a record. Degraded and the
// cairn_access_records_pending and cairn_access_log_failing gauges show it.
// Records still queued when the Writer stops are retried for
// Config.StopTimeout, then reported lost (the error of Run).
package accesslog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
)

// Defaults of Config.
const (
	DefaultQueue    = 16384
	DefaultMaxBatch = 4096
	// DefaultInterval is the shortest time between two appends. Each
	// append costs the same whatever it carries (a commit and its fsync,
	// a wake-up of every subscription of the log): at 10ms, the trail cost
	// `cairn-bench api` 6-9% more throughput than at 50ms, on either
	// backend. The interval only widens the crash window of reads'
	// records, whose responses were sent already: Kubernetes' batching
	// audit backend waits up to 30s by default.
	DefaultInterval = 50 * time.Millisecond
	// DefaultStopTimeout bounds the last flush when the Writer stops.
	DefaultStopTimeout = 5 * time.Second
	// DefaultFullWait is how long a record waits for room in a full
	// queue before its request is answered 503.
	DefaultFullWait = time.Second
	// maxRetryBackoff bounds the wait between two tries of a failed
	// append: how late the Writer notices that the disk has room again.
	maxRetryBackoff = 2 * time.Second
)

// ErrFull: the queue stayed full for Config.FullWait (appends fail or
// cannot keep up); the request is refused rather than left unrecorded. It
// is a domain KindUnavailable error (503).
var ErrFull = &domain.Error{Op: "accesslog", Kind: domain.KindUnavailable,
	Message: "the audit trail cannot be written (its queue is full); try again later"}

// Appender is what the Writer needs of the event store.
type Appender interface {
	Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) (eventstore.AppendResult, error)
}

// Config configures a Writer.
type Config struct {
	// Queue is how many records may wait to be appended (default 16384).
	Queue int
	// MaxBatch is the most records in one append (default 4096).
	MaxBatch int
	// Interval is the shortest time between two appends (default 50ms):
	// under load, each append carries what queued during the interval, so
	// the trail costs one append (an fsync, one wake-up of every
	// subscription) per interval, not per request. An idle writer appends
	// a new record at once. The responses of the requests were sent
	// already: the interval only widens the crash window.
	Interval time.Duration
	// StopTimeout bounds the last flush at stop (default 5s).
	StopTimeout time.Duration
	// FullWait is how long a record waits for room in a full queue before
	// its request is answered 503 (default 1s).
	FullWait time.Duration
	// Logger receives the logs (default slog.Default()).
	Logger *slog.Logger
	// Registerer receives the metrics (none when nil).
	Registerer prometheus.Registerer
}

// Writer appends queued access records to the access-log stream, in
// batches of whatever queued up since the previous append (group commit),
// at most one append per Config.Interval.
type Writer struct {
	cfg     Config
	store   Appender
	queue   chan audit.Record
	log     *slog.Logger
	written prometheus.Counter
	batches prometheus.Histogram
	failed  prometheus.Counter
	// inFlight is how many records Run holds out of the queue (the batch
	// being appended); failing is why appends fail, nil while they work.
	inFlight atomic.Int64
	mu       sync.Mutex
	failing  error
	// packer lays out every append's payloads in memory it reuses (Run's
	// goroutine only; the store keeps nothing once the append returns).
	packer audit.Packer
}

// NewWriter builds a Writer; Run appends.
func NewWriter(cfg Config, store Appender) (*Writer, error) {
	if store == nil {
		return nil, errors.New("accesslog: no store")
	}
	if cfg.Queue < 0 || cfg.MaxBatch < 0 || cfg.StopTimeout < 0 || cfg.Interval < 0 || cfg.FullWait < 0 {
		return nil, fmt.Errorf("accesslog: queue %d, batch %d, interval %s, stop timeout %s and full wait %s must not be negative",
			cfg.Queue, cfg.MaxBatch, cfg.Interval, cfg.StopTimeout, cfg.FullWait)
	}
	if cfg.Queue == 0 {
		cfg.Queue = DefaultQueue
	}
	if cfg.MaxBatch == 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.StopTimeout == 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.FullWait == 0 {
		cfg.FullWait = DefaultFullWait
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	w := &Writer{
		cfg: cfg, store: store, queue: make(chan audit.Record, cfg.Queue), log: cfg.Logger.With("component", "access-log"),
		written: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_access_records_written_total", Help: "Access records appended to the access-log stream."}),
		batches: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "cairn_access_record_batch_size", Help: "Access records per append.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 6)}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_access_record_append_failures_total", Help: "Failed appends of access records (retried)."}),
	}
	pending := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cairn_access_records_pending",
		Help: "Access records answered and not yet stored (queued or being appended)."},
		func() float64 { return float64(w.Pending()) })
	failing := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cairn_access_log_failing",
		Help: "1 while appends of access records fail (a full disk) and are retried, 0 otherwise."},
		func() float64 {
			if w.Degraded() != nil {
				return 1
			}
			return 0
		})
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{w.written, w.batches, w.failed, pending, failing} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("accesslog: metrics: %w", err)
			}
		}
	}
	return w, nil
}

// Write queues a record, waiting for room while the queue is full, for
// Config.FullWait at most (then ErrFull) or until ctx ends: the record is
// then not written, and the error says so.
func (w *Writer) Write(ctx context.Context, rec audit.Record) error {
	select {
	case w.queue <- rec:
		return nil
	default:
	}
	t := time.NewTimer(w.cfg.FullWait)
	defer t.Stop()
	select {
	case w.queue <- rec:
		return nil
	case <-t.C:
		return fmt.Errorf("record of %s not written: %w", rec.RequestID, ErrFull)
	case <-ctx.Done():
		return fmt.Errorf("accesslog: queue full, record of %s not written: %w", rec.RequestID, ctx.Err())
	}
}

// Full reports whether the queue has no room: a request would wait for
// it, and be refused if none comes within Config.FullWait.
func (w *Writer) Full() bool { return len(w.queue) == cap(w.queue) }

// Pending is how many records were queued and are not stored yet.
func (w *Writer) Pending() int { return len(w.queue) + int(w.inFlight.Load()) }

// Degraded returns why appends fail while they do (the records wait in
// memory and are retried), nil while they work: a health signal.
func (w *Writer) Degraded() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failing
}

func (w *Writer) setFailing(err error) {
	w.mu.Lock()
	w.failing = err
	w.mu.Unlock()
}

// Run appends queued records until ctx ends, then flushes what is queued
// (within Config.StopTimeout). A failed append is retried with back-off;
// the queue meanwhile fills up and holds requests back.
func (w *Writer) Run(ctx context.Context) error {
	batch := make([]audit.Record, 0, w.cfg.MaxBatch)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	var last time.Time // when the previous append began
	for {
		select {
		case <-ctx.Done():
			return w.flushAtStop()
		case rec := <-w.queue:
			batch = append(batch[:0], rec)
			w.inFlight.Store(1)
		}
		// Let what comes queue up until an interval has passed since the
		// previous append (sleeping: taking the records one by one would
		// wake this goroutine for each request).
		if wait := w.cfg.Interval - time.Since(last); wait > 0 && len(w.queue) < w.cfg.MaxBatch {
			linger.Reset(wait)
			select {
			case <-linger.C:
			case <-ctx.Done():
				linger.Stop()
			}
		}
		batch = w.fill(batch)
		last = time.Now()
		w.inFlight.Store(int64(len(batch)))
		err := w.appendRetrying(ctx, batch)
		w.inFlight.Store(0)
		if err != nil {
			if ctx.Err() != nil {
				// Keep the batch for the last flush.
				return w.flushAtStop(batch...)
			}
			return err
		}
	}
}

// fill adds what is queued already, up to MaxBatch.
func (w *Writer) fill(batch []audit.Record) []audit.Record {
	for len(batch) < w.cfg.MaxBatch {
		select {
		case rec := <-w.queue:
			batch = append(batch, rec)
		default:
			return batch
		}
	}
	return batch
}

// appendRetrying appends batch, retrying a failed append after 10ms,
// doubling up to maxRetryBackoff (no jitter), until it succeeds or ctx
// ends. A batch the store refuses as invalid is dropped: retrying cannot
// help.
func (w *Writer) appendRetrying(ctx context.Context, batch []audit.Record) error {
	try := func() error {
		err := w.append(ctx, batch)
		switch {
		case err == nil:
			if w.Degraded() != nil {
				w.log.Info("access records stored again", slog.Int("records", len(batch)))
				w.setFailing(nil)
			}
			return nil
		case errors.Is(err, eventstore.ErrInvalidEvent):
			// Cannot succeed by retrying (a bug): say so loudly, keep going.
			w.log.Error("access records refused by the store; dropped", slog.Int("records", len(batch)), slog.Any("error", err))
			return nil
		}
		w.failed.Inc()
		w.setFailing(err)
		return err
	}
	notify := func(err error, wait time.Duration) {
		w.log.Warn("cannot append access records; retrying", slog.Int("records", len(batch)), slog.Any("error", err), slog.Duration("retry_in", wait))
	}
	b := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(10*time.Millisecond),
		backoff.WithMaxInterval(maxRetryBackoff),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0),
	)
	return backoff.RetryNotify(try, backoff.WithContext(b, ctx), notify)
}

func (w *Writer) append(ctx context.Context, batch []audit.Record) error {
	// One event per group commit (several when it is large), in one
	// append: all of the batch is stored or none of it.
	payloads := w.packer.Pack(len(batch), domain.AuditPayloadBytes, func(b []byte, i int) []byte {
		return audit.AppendUnsealedJSON(b, &batch[i])
	})
	data := make([]eventstore.EventData, len(payloads))
	for i, p := range payloads {
		data[i] = eventstore.EventData{ID: eventstore.NewEventID(), Type: domain.TypeAccessBatchLogged, Version: domain.SchemaVersion,
			Data: p, Metadata: eventstore.Metadata{Actor: "system:access-log"}}
	}
	if _, err := w.store.Append(ctx, domain.AccessLogStream, eventstore.Any, data...); err != nil {
		return err
	}
	w.written.Add(float64(len(batch)))
	w.batches.Observe(float64(len(batch)))
	return nil
}

// flushAtStop appends pending and everything still queued, retrying
// failed appends (a full disk) until Config.StopTimeout.
func (w *Writer) flushAtStop(pending ...audit.Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.StopTimeout)
	defer cancel()
	batch := append([]audit.Record(nil), pending...)
	for {
		batch = w.fill(batch)
		if len(batch) == 0 {
			return nil
		}
		if err := w.appendRetrying(ctx, batch); err != nil {
			lost := len(batch) + len(w.queue)
			w.log.Error("access records lost at stop: the store took no writes", slog.Int("records", lost), slog.Any("error", w.Degraded()))
			return fmt.Errorf("accesslog: %d records not written at stop: %w", lost, errors.Join(err, w.Degraded()))
		}
		batch = batch[:0]
	}
}
