// Package auditseq is the audit trail's sequencer: the one writer of the
// hash chain of the tamper-evident audit trail (docs/architecture.md).
//
// # Design
//
// Access records are written where nothing can lose them: a mutating
// request's record in the same append as its events (commands.Access),
// every other request's record (reads, refusals, failures) batched into
// the access-log stream by the HTTP layer. Those access.logged events are
// not chained yet: requests run concurrently on several replicas, and a
// chain needs one order. The sequencer gives it the order of the global
// log: it follows $all, seals the records of every access.logged and
// access.batch-logged event into the chain (domain/audit: seq, prev_hash,
// hash) and appends them, in runs (audit.sealed events of up to
// domain.AuditPayloadBytes), to the audit stream, expecting the revision
// of the stream's last event, so a second sequencer can never fork the
// chain.
//
// Every sealed record names the position of the event that logged it, and
// one append seals its source events whole; on start the sequencer reads
// the chain's last record and follows the log after that position, so a
// crash or a lost lease neither skips nor repeats a record. Run it under
// the leader lease (infra/lease).
//
// Under load it appends at most once per Config.Interval (200ms): each
// append then seals the interval's records, so the chain costs a few
// appends a second however busy the API is.
package auditseq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
)

// DefaultBatch is how many records the sequencer gathers before it
// seals them in one append (it seals sooner when the log has nothing more
// buffered, and it never splits a source event's records).
const DefaultBatch = 4096

// DefaultInterval is the shortest time between two appends of sealed
// records. It trades how soon a record shows in the audit queries (the
// records are durable in their batch already) for the cost of sealing:
// under the API benchmark (SQLite), 200ms instead of 50ms took the
// throughput with the audit on from about 0.73 to about 0.80 of the
// throughput with it off.
const DefaultInterval = 200 * time.Millisecond

// Store is what the sequencer needs of the event store.
type Store interface {
	Subscribe(ctx context.Context, after uint64) (eventstore.Subscription, error)
	ReadStream(ctx context.Context, stream string, opts eventstore.ReadStreamOptions) ([]eventstore.RecordedEvent, error)
	Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) (eventstore.AppendResult, error)
}

// Config configures a Sequencer.
type Config struct {
	// Batch is the most records one append seals (default DefaultBatch).
	Batch int
	// Interval is the shortest time between two appends (default
	// DefaultInterval; negative: none): under load an append seals what
	// was logged during the interval, so the chain costs a few appends
	// (fsyncs, wake-ups of every subscription, read-model commits) a
	// second. A record waits at most that long to be sealed.
	Interval time.Duration
	// Logger receives the logs (default slog.Default()).
	Logger *slog.Logger
	// OnSealed, if set, is called after each append with the chain's head
	// (tests and metrics).
	OnSealed func(audit.Head)
	// Registerer receives the metrics (none when nil): records sealed,
	// the chain's head seq, and the size of each append.
	Registerer prometheus.Registerer
}

// Sequencer seals access records into the chain.
type Sequencer struct {
	cfg     Config
	store   Store
	log     *slog.Logger
	sealed  prometheus.Counter
	head    prometheus.Gauge
	batches prometheus.Histogram

	// Memory each seal reuses (the store keeps nothing of an append's
	// payloads once it returns).
	records   []audit.Record
	positions []uint64
	chained   []audit.Record
	packer    audit.Packer
	data      []eventstore.EventData
}

// New builds a sequencer over store.
func New(cfg Config, store Store) (*Sequencer, error) {
	if store == nil {
		return nil, errors.New("auditseq: no store")
	}
	if cfg.Batch < 0 {
		return nil, fmt.Errorf("auditseq: batch %d must not be negative", cfg.Batch)
	}
	if cfg.Batch == 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Sequencer{cfg: cfg, store: store, log: cfg.Logger.With("component", "audit-sequencer"),
		sealed: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_audit_records_sealed_total", Help: "Access records sealed into the audit chain by this process."}),
		head:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_audit_chain_seq", Help: "Seq of the audit chain's head as this process last sealed or resumed it."}),
		batches: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "cairn_audit_seal_batch_size", Help: "Access records sealed per append.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 6)}),
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{s.sealed, s.head, s.batches} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("auditseq: metrics: %w", err)
			}
		}
	}
	return s, nil
}

// The wait before the sequencer resumes from the chain's head: the
// shortest after a fork, doubling up to the longest while the store takes
// no writes (KindUnavailable: a full disk).
const (
	minResumeWait = 100 * time.Millisecond
	maxResumeWait = 5 * time.Second
)

// errForked means another writer appended to the chain meanwhile.
var errForked = errors.New("the audit chain moved under the sequencer")

// Run seals records until ctx ends (it returns nil then). When another
// writer appended to the chain meanwhile, it starts over from the chain's
// new head.
func (s *Sequencer) Run(ctx context.Context) error {
	wait := minResumeWait
	for {
		err := s.run(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, errForked) {
			return err
		}
		if domain.KindOf(err) == domain.KindUnavailable {
			// A full disk: the records stay in the log, sealed once the
			// store takes writes again; back off meanwhile.
			s.log.Warn("cannot append to the audit chain; resuming from its head", slog.Any("error", err), slog.Duration("retry_in", wait))
		} else {
			wait = minResumeWait
			s.log.Warn("audit chain moved under the sequencer; resuming from its head", slog.Any("error", err))
		}
		t := time.NewTimer(wait)
		wait = min(2*wait, maxResumeWait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// legacyRecorded is the type of the audit stream's events before the
// trail was batched (one record per event), which no build released
// since reads.
const legacyRecorded = "audit.recorded"

// Tip is where the chain ends in the audit stream: the head of its last
// record, the log position up to which every access record is sealed,
// and the stream's last revision (-1 while it is empty), which the next
// append expects.
type Tip struct {
	Head     audit.Head
	After    uint64
	Revision int64
}

// Resume reads the chain's tip from the audit stream's last event.
func Resume(ctx context.Context, store Store) (Tip, error) {
	last, err := store.ReadStream(ctx, domain.AuditStream, eventstore.ReadStreamOptions{Direction: eventstore.Backward, From: eventstore.FromEnd, Limit: 1})
	if errors.Is(err, eventstore.ErrStreamNotFound) || (err == nil && len(last) == 0) {
		return Tip{Head: audit.Genesis, Revision: -1}, nil
	}
	if err != nil {
		return Tip{}, fmt.Errorf("auditseq: read the chain's head: %w", err)
	}
	if last[0].Type == legacyRecorded {
		return Tip{}, fmt.Errorf("auditseq: the audit stream holds %s events, one record each, written by a pre-release build before the trail was batched; "+
			"this build does not continue that chain: verify it with the build that wrote it, then start from a new data directory (or database schema)", legacyRecorded)
	}
	ev, err := domain.DecodeEvent(last[0].Type, last[0].Version, last[0].Data)
	if err != nil {
		return Tip{}, fmt.Errorf("auditseq: decode the chain's head: %w", err)
	}
	sealed, ok := ev.(domain.AuditSealed)
	if !ok || len(sealed.Records) == 0 {
		return Tip{}, fmt.Errorf("auditseq: the audit stream's last event (revision %d, %s) holds no sealed records", last[0].Revision, last[0].Type)
	}
	end := sealed.Records[len(sealed.Records)-1]
	return Tip{Head: end.Head(), After: end.SourcePosition, Revision: last[0].Revision}, nil
}

// source is one logged event's records, waiting to be sealed.
type source struct {
	event   eventstore.RecordedEvent
	records []audit.Record
}

func (s *Sequencer) run(ctx context.Context) error {
	tip, err := Resume(ctx, s.store)
	if err != nil {
		return err
	}
	sub, err := s.store.Subscribe(ctx, tip.After)
	if err != nil {
		return fmt.Errorf("auditseq: subscribe: %w", err)
	}
	defer sub.Close()
	s.head.Set(float64(tip.Head.Seq))
	s.log.Info("audit sequencer following the log", slog.Uint64("seq", tip.Head.Seq), slog.Uint64("after", tip.After))

	var pending []source
	var count int
	var last time.Time // when the previous append began
	flush := func() error {
		last = time.Now()
		err := s.seal(ctx, &tip, pending)
		pending, count = pending[:0], 0
		return err
	}
	due := time.NewTimer(time.Hour)
	due.Stop()
	defer due.Stop()
	for {
		var msg eventstore.Message
		var ok bool
		if len(pending) == 0 {
			select {
			case <-ctx.Done():
				return nil
			case msg, ok = <-sub.Messages():
			}
		} else {
			select {
			case msg, ok = <-sub.Messages():
			default:
				// Nothing more buffered: seal what we have once an
				// interval has passed since the previous append, taking
				// what comes meanwhile.
				wait := s.cfg.Interval - time.Since(last)
				if wait <= 0 {
					if err := flush(); err != nil {
						return err
					}
					continue
				}
				due.Reset(wait)
				select {
				case <-ctx.Done():
					return nil
				case <-due.C:
					if err := flush(); err != nil {
						return err
					}
					continue
				case msg, ok = <-sub.Messages():
					due.Stop()
				}
			}
		}
		if !ok {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("auditseq: subscription ended: %w", sub.Err())
		}
		if msg.CaughtUp || (msg.Event.Type != domain.TypeAccessLogged && msg.Event.Type != domain.TypeAccessBatchLogged) {
			continue
		}
		ev, err := domain.DecodeEvent(msg.Event.Type, msg.Event.Version, msg.Event.Data)
		if err != nil {
			return fmt.Errorf("auditseq: %s@%d: decode the access records: %w", msg.Event.Stream, msg.Event.Revision, err)
		}
		records, _ := domain.AccessRecords(ev)
		if len(records) == 0 {
			continue
		}
		pending = append(pending, source{event: msg.Event, records: records})
		if count += len(records); count >= s.cfg.Batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// seal chains the records of srcs after tip's head and appends them to the
// audit stream, in one append of as many audit.sealed events as their size
// needs, expecting tip's revision; tip moves only once they are stored.
func (s *Sequencer) seal(ctx context.Context, tip *Tip, srcs []source) error {
	records, positions := s.records[:0], s.positions[:0]
	for _, src := range srcs {
		records = append(records, src.records...)
		for range src.records {
			positions = append(positions, src.event.Position)
		}
	}
	sealed, next, err := audit.SealAppend(s.chained[:0], tip.Head, records)
	clear(records) // drop the strings until the next seal
	s.records, s.positions, s.chained = records[:0], positions, sealed
	if err != nil {
		return fmt.Errorf("auditseq: seal records after seq %d: %w", tip.Head.Seq, err)
	}
	defer clear(sealed)
	payloads := s.packer.Pack(len(sealed), domain.AuditPayloadBytes, func(b []byte, i int) []byte {
		return domain.AppendSealedJSON(b, &domain.SealedRecord{Record: sealed[i], SourcePosition: positions[i]})
	})
	data := s.data[:0]
	for _, p := range payloads {
		data = append(data, eventstore.EventData{ID: eventstore.NewEventID(), Type: domain.TypeAuditSealed, Version: domain.SchemaVersion,
			Data: p, Metadata: eventstore.Metadata{Actor: "system:audit"}})
	}
	s.data = data
	res, err := s.store.Append(ctx, domain.AuditStream, eventstore.Exact(tip.Revision), data...)
	if err != nil {
		if errors.Is(err, eventstore.ErrWrongExpectedRevision) {
			return fmt.Errorf("%w: %w", errForked, err)
		}
		// The append may have been written: resume from the stored head.
		return fmt.Errorf("%w: append: %w", errForked, err)
	}
	*tip = Tip{Head: next, After: srcs[len(srcs)-1].event.Position, Revision: res.Revision}
	s.sealed.Add(float64(len(sealed)))
	s.head.Set(float64(next.Seq))
	s.batches.Observe(float64(len(sealed)))
	if s.cfg.OnSealed != nil {
		s.cfg.OnSealed(next)
	}
	return nil
}
