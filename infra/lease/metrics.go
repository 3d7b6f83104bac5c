package lease

import "github.com/prometheus/client_golang/prometheus"

// Metrics are what an operator watches of the leases a process takes part
// in, one series per lease name: whether this process holds it, the epoch
// it holds it at, and the renewals that failed (a leader whose renewals
// keep failing steps down at its local deadline). One Metrics serves every
// lease of a process.
type Metrics struct {
	held     *prometheus.GaugeVec
	epoch    *prometheus.GaugeVec
	failed   *prometheus.CounterVec
	stepDown *prometheus.CounterVec
}

// NewMetrics registers the lease metrics with reg (nil: kept unregistered,
// e.g. in tests).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		held: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cairn_lease_held",
			Help: "1 while this process holds the lease (leads its singleton), else 0.",
		}, []string{"lease"}),
		epoch: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cairn_lease_epoch",
			Help: "The epoch at which this process last took the lease (every takeover increments it; its writes are fenced by it).",
		}, []string{"lease"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_lease_renewals_failed_total",
			Help: "Renewals of a held lease that did not succeed (the database unreachable or too slow).",
		}, []string{"lease"}),
		stepDown: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_lease_step_downs_total",
			Help: "Times this process gave a lease up while it still meant to lead: reason expired (no renewal before its local deadline) or taken (another holder has it).",
		}, []string{"lease", "reason"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.held, m.epoch, m.failed, m.stepDown} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// The recorders accept a nil *Metrics (no metrics wanted).

func (m *Metrics) taken(name string, epoch int64) {
	if m == nil {
		return
	}
	m.held.WithLabelValues(name).Set(1)
	m.epoch.WithLabelValues(name).Set(float64(epoch))
}

func (m *Metrics) following(name string) {
	if m == nil {
		return
	}
	m.held.WithLabelValues(name).Set(0)
	m.failed.WithLabelValues(name)
}

func (m *Metrics) renewalFailed(name string) {
	if m != nil {
		m.failed.WithLabelValues(name).Inc()
	}
}

func (m *Metrics) steppedDown(name, reason string) {
	if m != nil {
		m.stepDown.WithLabelValues(name, reason).Inc()
	}
}
