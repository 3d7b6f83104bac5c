package appproxy

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	sockets        prometheus.Gauge
	refused        prometheus.Counter
	upstreamErrors prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		sockets: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_app_proxy_websockets",
			Help: "WebSocket (upgraded) connections the app proxy holds open."}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_app_proxy_refused_total",
			Help: "App requests refused for a missing, bad, used or foreign ticket or cookie."}),
		upstreamErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_app_proxy_upstream_errors_total",
			Help: "App requests whose agent did not answer."}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.sockets, m.refused, m.upstreamErrors} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("appproxy: metrics: %w", err)
			}
		}
	}
	return m, nil
}
