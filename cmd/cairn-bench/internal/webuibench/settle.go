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

// Settle waits until the server is quiet: some projector has seen at least
// minSeen events since the server started, every projector is at the same
// log position, and that position has not changed for quietFor. On a store
// grown while the server was stopped, the scheduler's first rounds record
// why each new PENDING session waits (one session.pending-updated each,
// 100,000 of them at the full size, once the scheduler has folded the log)
// and the sessions projector follows; the caller's minSeen counts them,
// and the pages are measured once that is done, as in a queue that has
// been waiting. Events are counted, not positions: PostgreSQL's log
// positions are not dense, so a position says nothing about how many
// events came before it.
func (s *Seeder) Settle(ctx context.Context, minSeen uint64, quietFor time.Duration) error {
	const every = 250 * time.Millisecond
	var last uint64
	var since, logged time.Time
	for {
		positions, seen, err := s.progress(ctx)
		if err != nil {
			return err
		}
		lo, hi := slices.Min(positions), slices.Max(positions)
		now := time.Now()
		switch {
		case lo != hi || hi != last || seen < minSeen:
			last, since = hi, now
		case now.Sub(since) >= quietFor:
			return nil
		}
		if now.Sub(logged) >= 5*time.Second {
			logged = now
			slog.Info("web-UI benchmark: waiting for the server to settle (the scheduler records why the new sessions wait)",
				"slowest_projector", lo, "log", hi, "events_seen", seen, "awaited", minSeen)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the server has not settled: %w", ctx.Err())
		case <-time.After(every):
		}
	}
}

// progress answers the projectors' log positions
// (cairn_projection_position) and the most events one of them has seen
// since the server started (cairn_projection_events_seen_total), from the
// server's /metrics.
func (s *Seeder) progress(ctx context.Context) ([]uint64, uint64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.srv.URL+"/metrics", nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("GET /metrics: status %d", resp.StatusCode)
	}
	var p expfmt.TextParser
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, 0, fmt.Errorf("GET /metrics: %w", err)
	}
	f, ok := families["cairn_projection_position"]
	if !ok || len(f.GetMetric()) == 0 {
		return nil, 0, fmt.Errorf("GET /metrics: no cairn_projection_position")
	}
	var positions []uint64
	for _, m := range f.GetMetric() {
		positions = append(positions, uint64(m.GetGauge().GetValue()))
	}
	var seen uint64
	if f, ok := families["cairn_projection_events_seen_total"]; ok {
		for _, m := range f.GetMetric() {
			seen = max(seen, uint64(m.GetCounter().GetValue()))
		}
	}
	return positions, seen, nil
}
