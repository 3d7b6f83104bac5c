package projections

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the projectors' Prometheus metrics, labelled by projection.
// Build them once per registry (NewMetrics) and share them between the
// projectors through Options.Metrics.
type Metrics struct {
	applied  *prometheus.CounterVec
	seen     *prometheus.CounterVec
	batches  *prometheus.CounterVec
	position *prometheus.GaugeVec
	lag      *prometheus.GaugeVec
	paused   *prometheus.GaugeVec
	duration *prometheus.HistogramVec
}

// Batch outcomes, the "outcome" label of cairn_projection_batches_total.
const (
	outcomeCommitted = "committed"
	outcomeFailed    = "failed"
	outcomeResync    = "resync"
)

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	label := []string{"projection"}
	m := &Metrics{
		applied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_projection_events_applied_total",
			Help: "Events applied to the read model (committed).",
		}, label),
		seen: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_projection_events_seen_total",
			Help: "Events received from the log, applied or skipped.",
		}, label),
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_projection_batches_total",
			Help: "Batch transactions by outcome (committed, failed, resync).",
		}, []string{"projection", "outcome"}),
		position: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cairn_projection_position",
			Help: "Last log position the read model reflects.",
		}, label),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cairn_projection_lag_seconds",
			Help: "Age of the last event applied while more were waiting; 0 when caught up.",
		}, label),
		paused: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cairn_projection_paused",
			Help: "1 while the projector waits for its database to take writes again (a full disk), 0 otherwise.",
		}, label),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cairn_projection_batch_duration_seconds",
			Help:    "Time to apply and commit one batch.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9),
		}, label),
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.applied, m.seen, m.batches, m.position, m.lag, m.paused, m.duration} {
		errs = append(errs, reg.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}

// projMetrics are the metrics of one projection; the zero value records
// nothing.
type projMetrics struct {
	applied, seen             prometheus.Counter
	committed, failed, resync prometheus.Counter
	position, lag, paused     prometheus.Gauge
	duration                  prometheus.Observer
	enabled                   bool
}

func (m *Metrics) forProjection(name string) projMetrics {
	if m == nil {
		return projMetrics{}
	}
	return projMetrics{
		applied:   m.applied.WithLabelValues(name),
		seen:      m.seen.WithLabelValues(name),
		committed: m.batches.WithLabelValues(name, outcomeCommitted),
		failed:    m.batches.WithLabelValues(name, outcomeFailed),
		resync:    m.batches.WithLabelValues(name, outcomeResync),
		position:  m.position.WithLabelValues(name),
		lag:       m.lag.WithLabelValues(name),
		paused:    m.paused.WithLabelValues(name),
		duration:  m.duration.WithLabelValues(name),
		enabled:   true,
	}
}

func (m projMetrics) batch(outcome string, applied int, took time.Duration) {
	if !m.enabled {
		return
	}
	switch outcome {
	case outcomeCommitted:
		m.committed.Inc()
		m.applied.Add(float64(applied))
		m.duration.Observe(took.Seconds())
	case outcomeFailed:
		m.failed.Inc()
	case outcomeResync:
		m.resync.Inc()
	}
}

func (m projMetrics) received(n int, lag time.Duration) {
	if m.enabled {
		m.seen.Add(float64(n))
		m.lag.Set(lag.Seconds())
	}
}

func (m projMetrics) setPosition(pos uint64) {
	if m.enabled {
		m.position.Set(float64(pos))
	}
}

func (m projMetrics) setPaused(paused bool) {
	if m.enabled {
		v := 0.0
		if paused {
			v = 1
		}
		m.paused.Set(v)
	}
}
