// Package auditseq is the audit trail's sequencer: the one writer of the
// hash chain (DOMAIN.md "Audit and logs", ARCHITECTURE "A tamper-evident
// audit trail").
//
// # Design
//
// Access records are written where nothing can lose them: a mutating
// request's record in the same append as its events (commands.AccessSlot),
// every other request's record (reads, refusals, failures) batched into
// the access-log stream by the HTTP layer. Those access.logged events are
// not chained yet: requests run concurrently on several replicas, and a
// chain needs one order. The sequencer gives it the order of the global
// log: it follows $all, seals every access.logged event into the chain
// (domain/audit: seq, prev_hash, hash) and appends the sealed records,
// in batches, to the audit stream with the expected revision seq-1 of the
// chain's head, so a second sequencer can never fork the chain.
//
// Every sealed record names the position of the access.logged event it
// seals; on start the sequencer reads the chain's last record and follows
// the log after that position, so a crash or a lost lease neither skips
// nor repeats a record. Run it under the leader lease (infra/lease).
package auditseq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
)

// DefaultBatch is the most records sealed into one append.
const DefaultBatch = 512

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

// errForked means another writer appended to the chain meanwhile.
var errForked = errors.New("the audit chain moved under the sequencer")

// Run seals records until ctx ends (it returns nil then). When another
// writer appended to the chain meanwhile, it starts over from the chain's
// new head.
func (s *Sequencer) Run(ctx context.Context) error {
	for {
		err := s.run(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, errForked) {
			return err
		}
		s.log.Warn("audit chain moved under the sequencer; resuming from its head", slog.Any("error", err))
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// Resume reads the chain's head from the audit stream: its last record,
// and the position of the access.logged event that record sealed.
func Resume(ctx context.Context, store Store) (audit.Head, uint64, error) {
	last, err := store.ReadStream(ctx, domain.AuditStream, eventstore.ReadStreamOptions{Direction: eventstore.Backward, From: eventstore.FromEnd, Limit: 1})
	if errors.Is(err, eventstore.ErrStreamNotFound) || (err == nil && len(last) == 0) {
		return audit.Genesis, 0, nil
	}
	if err != nil {
		return audit.Head{}, 0, fmt.Errorf("auditseq: read the chain's head: %w", err)
	}
	var rec domain.AuditRecorded
	if err := json.Unmarshal(last[0].Data, &rec); err != nil {
		return audit.Head{}, 0, fmt.Errorf("auditseq: decode the chain's head: %w", err)
	}
	if rec.Seq != uint64(last[0].Revision)+1 {
		return audit.Head{}, 0, fmt.Errorf("auditseq: the chain's head has seq %d at revision %d", rec.Seq, last[0].Revision)
	}
	return rec.Head(), rec.SourcePosition, nil
}

func (s *Sequencer) run(ctx context.Context) error {
	head, after, err := Resume(ctx, s.store)
	if err != nil {
		return err
	}
	sub, err := s.store.Subscribe(ctx, after)
	if err != nil {
		return fmt.Errorf("auditseq: subscribe: %w", err)
	}
	defer sub.Close()
	s.head.Set(float64(head.Seq))
	s.log.Info("audit sequencer following the log", slog.Uint64("seq", head.Seq), slog.Uint64("after", after))

	var pending []eventstore.RecordedEvent
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
				// Nothing more buffered: seal what we have.
				if err := s.seal(ctx, &head, pending); err != nil {
					return err
				}
				pending = pending[:0]
				continue
			}
		}
		if !ok {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("auditseq: subscription ended: %w", sub.Err())
		}
		if msg.CaughtUp || msg.Event.Type != domain.TypeAccessLogged {
			continue
		}
		pending = append(pending, msg.Event)
		if len(pending) >= s.cfg.Batch {
			if err := s.seal(ctx, &head, pending); err != nil {
				return err
			}
			pending = pending[:0]
		}
	}
}

// seal chains the access records of srcs after *head and appends them to
// the audit stream with the chain's expected revision; *head moves only
// once they are stored.
func (s *Sequencer) seal(ctx context.Context, head *audit.Head, srcs []eventstore.RecordedEvent) error {
	records := make([]audit.Record, len(srcs))
	for i, src := range srcs {
		var logged domain.AccessLogged
		if err := json.Unmarshal(src.Data, &logged); err != nil {
			return fmt.Errorf("auditseq: %s@%d: decode the access record: %w", src.Stream, src.Revision, err)
		}
		records[i] = logged.Record
	}
	sealed, next, err := audit.SealAll(*head, records)
	if err != nil {
		return fmt.Errorf("auditseq: seal records after seq %d: %w", head.Seq, err)
	}
	data := make([]eventstore.EventData, len(sealed))
	for i, r := range sealed {
		payload, err := json.Marshal(domain.AuditRecorded{Record: r, SourcePosition: srcs[i].Position})
		if err != nil {
			return fmt.Errorf("auditseq: encode record %d: %w", r.Seq, err)
		}
		data[i] = eventstore.EventData{ID: eventstore.NewEventID(), Type: domain.TypeAuditRecorded, Version: domain.SchemaVersion,
			Data: payload, Metadata: eventstore.Metadata{Actor: "system:audit", CausationID: srcs[i].ID.String(), RequestID: r.RequestID}}
	}
	if _, err := s.store.Append(ctx, domain.AuditStream, eventstore.Exact(int64(head.Seq)-1), data...); err != nil {
		if errors.Is(err, eventstore.ErrWrongExpectedRevision) {
			return fmt.Errorf("%w: %w", errForked, err)
		}
		// The append may have been written: resume from the stored head.
		return fmt.Errorf("%w: append: %w", errForked, err)
	}
	*head = next
	s.sealed.Add(float64(len(sealed)))
	s.head.Set(float64(next.Seq))
	s.batches.Observe(float64(len(sealed)))
	if s.cfg.OnSealed != nil {
		s.cfg.OnSealed(next)
	}
	return nil
}
