package httpauth

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/infra/auth/signing"
)

// metrics are what an operator watches of signed requests: refused
// replays, and how full the replay cache is and how far back it still
// remembers.
type metrics struct {
	replays *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, a *Authenticator) (*metrics, error) {
	m := &metrics{
		replays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_auth_replays_refused_total",
			Help: "Strict-mode signed requests refused by the replay cache: reason replayed (the signature was already accepted) or replay-window (dated before what the full cache still remembers).",
		}, []string{"reason"}),
	}
	if reg == nil {
		return m, nil
	}
	held := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "cairn_auth_replay_cache_signatures",
		Help: "Strict-mode signatures the replay cache holds (at most the replay cache size).",
	}, func() float64 { return float64(a.replay.Len()) })
	window := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "cairn_auth_replay_window_seconds",
		Help: "How old a strict-mode request may be and still be accepted: the skew window, less when the full replay cache has shrunk it.",
	}, func() float64 { return a.replayWindow().Seconds() })
	for _, c := range []prometheus.Collector{m.replays, held, window} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// refused counts a refusal of the replay cache (other reasons are not
// replays and are not counted here).
func (m *metrics) refused(r signing.Reason) {
	if r == signing.ReasonReplayed || r == signing.ReasonReplayWindow {
		m.replays.WithLabelValues(r.String()).Inc()
	}
}
