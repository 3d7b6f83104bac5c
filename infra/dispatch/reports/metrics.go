package reports

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics count the liveness check's verdicts, so that an operator sees
// flapping agents (many disconnections, as many reconnections) apart from
// dead ones (lost).
type metrics struct {
	disconnected prometheus.Counter
	reconnected  prometheus.Counter
	lost         prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (metrics, error) {
	m := metrics{
		disconnected: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_agents_disconnected_total",
			Help: "Agents declared disconnected (silent past the heartbeat timeout) by this process."}),
		reconnected: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_agents_reconnected_total",
			Help: "Disconnected agents brought back by a heartbeat by this process."}),
		lost: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_agents_lost_total",
			Help: "Agents given up on (silent past the agent lost timeout) by this process."}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.disconnected, m.reconnected, m.lost} {
			if err := reg.Register(c); err != nil {
				return metrics{}, fmt.Errorf("metrics: %w", err)
			}
		}
	}
	return m, nil
}
