package webuibench

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/common/expfmt"
)

// Settle waits until the server is quiet: the log at least at minLog,
// every projector at the same log position, and that position unchanged
// for quietFor. On a store grown while the server was stopped, the
// scheduler's first rounds record why each new PENDING session waits (one
// session.pending-updated each, 100,000 of them at the full size, once
// the scheduler has folded the log) and the sessions projector follows;
// the caller's minLog counts them, and the pages are measured once that
// is done, as in a queue that has been waiting.
func (s *Seeder) Settle(ctx context.Context, minLog uint64, quietFor time.Duration) error {
	const every = 250 * time.Millisecond
	var last uint64
	var since, logged time.Time
	for {
		positions, err := s.positions(ctx)
		if err != nil {
			return err
		}
		lo, hi := slices.Min(positions), slices.Max(positions)
		now := time.Now()
		switch {
		case lo != hi || hi != last || hi < minLog:
			last, since = hi, now
		case now.Sub(since) >= quietFor:
			return nil
		}
		if now.Sub(logged) >= 5*time.Second {
			logged = now
			slog.Info("web-UI benchmark: waiting for the server to settle (the scheduler records why the new sessions wait)",
				"slowest_projector", lo, "log", hi, "awaited", minLog)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the server has not settled: %w", ctx.Err())
		case <-time.After(every):
		}
	}
}

// Head is the furthest position a projector has reached.
func (s *Seeder) Head(ctx context.Context) (uint64, error) {
	p, err := s.positions(ctx)
	if err != nil {
		return 0, err
	}
	return slices.Max(p), nil
}

// positions are the projectors' log positions from the server's /metrics
// (cairn_projection_position).
func (s *Seeder) positions(ctx context.Context) ([]uint64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.srv.URL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: status %d", resp.StatusCode)
	}
	var p expfmt.TextParser
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	f, ok := families["cairn_projection_position"]
	if !ok || len(f.GetMetric()) == 0 {
		return nil, fmt.Errorf("GET /metrics: no cairn_projection_position")
	}
	var out []uint64
	for _, m := range f.GetMetric() {
		out = append(out, uint64(m.GetGauge().GetValue()))
	}
	return out, nil
}
