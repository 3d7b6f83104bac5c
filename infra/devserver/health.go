package devserver

import (
	"errors"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/eventstore/sqlite"
)

// Degradation is a part that works in a degraded way, and why: the event
// store or a writer takes no writes (a full disk) and waits for room,
// while reads keep working.
type Degradation struct {
	Part   string `json:"part"`
	Reason string `json:"reason"`
}

// degradedPart is one part's health signal: why it is degraded, nil when
// it is not.
type degradedPart struct {
	name   string
	reason func() error
}

// healthParts are the parts whose degraded state /healthz and the
// cairn_degraded gauge report.
func (s *server) healthParts() []degradedPart {
	var out []degradedPart
	if st, ok := s.store.(*sqlite.Store); ok {
		out = append(out, degradedPart{"event store", st.Full})
	}
	if s.nats != nil {
		out = append(out, degradedPart{"embedded NATS", s.nats.Degraded})
	}
	if s.access != nil {
		out = append(out, degradedPart{"access log", func() error {
			err := s.access.Degraded()
			if s.access.Full() {
				err = errors.Join(err, errors.New("its queue is full: API requests are refused with 503"))
			}
			return err
		}})
	}
	for _, p := range s.projectors {
		out = append(out, degradedPart{"projector " + p.Name(), p.Paused})
	}
	return out
}

// degraded lists the parts that are degraded now.
func (s *server) degraded() []Degradation {
	var out []Degradation
	for _, p := range s.healthParts() {
		if err := p.reason(); err != nil {
			out = append(out, Degradation{Part: p.name, Reason: err.Error()})
		}
	}
	return out
}

// registerHealth adds the gauges cairn_degraded{part} (1 while a part is
// degraded) and cairn_data_dir_free_bytes to reg.
func (s *server) registerHealth(reg prometheus.Registerer) error {
	var errs []error
	for _, p := range s.healthParts() {
		g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "cairn_degraded",
			Help:        "1 while a part works degraded (its writes fail, e.g. on a full disk, and are retried), 0 otherwise.",
			ConstLabels: prometheus.Labels{"part": p.name},
		}, func() float64 {
			if p.reason() != nil {
				return 1
			}
			return 0
		})
		errs = append(errs, reg.Register(g))
	}
	errs = append(errs, reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "cairn_data_dir_free_bytes",
		Help: "Bytes an unprivileged writer may still use on the data directory's file system (-1 when unknown).",
	}, func() float64 { return float64(s.dataDirFree()) })))
	return errors.Join(errs...)
}

// dataDirFree is the room left on the data directory's file system, -1
// when it cannot be read.
func (s *server) dataDirFree() int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(s.cfg.DataDir, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * st.Bsize
}
