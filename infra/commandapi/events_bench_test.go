package commandapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// BenchmarkChangeDelivery measures the delay from a command's commit (the
// event's recorded_at, the store's commit time) to its change read whole
// by a client of GET /v1/events, with 1 and 100 streams open (all of
// which receive the change; the delay is measured on the last one opened).
// It reports the median and the 99th percentile (ms); the target is 250
// ms at p99.
//
//	go test -run '^$' -bench BenchmarkChangeDelivery -benchtime 200x ./infra/commandapi/
func BenchmarkChangeDelivery(b *testing.B) {
	for _, streams := range []int{1, 100} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			e := newEnv(b, envOptions{})
			var s *sseStream
			for range streams {
				s = e.openStream(b, aliceToken, "?kinds=session", "")
				s.ready(b)
			}
			delays := make([]time.Duration, 0, b.N)
			for b.Loop() {
				r := e.do(b, "POST", "/v1/sessions", aliceToken, validBody)
				if r.status != http.StatusCreated {
					b.Fatalf("create: %d %s", r.status, r.body)
				}
				var c created
				r.decode(b, &c)
				got, at := s.untilAt(b, func(ch change) bool { return ch.ID == c.ID })
				pos := got[len(got)-1].Position
				evs, err := e.store.ReadAll(context.Background(), pos-1, 1)
				if err != nil || len(evs) != 1 || evs[0].Position != pos {
					b.Fatalf("read event %d: %v %v", pos, evs, err)
				}
				delays = append(delays, at.Sub(evs[0].RecordedAt))
			}
			slices.Sort(delays)
			ms := func(q float64) float64 {
				return float64(delays[min(len(delays)-1, int(q*float64(len(delays))))]) / float64(time.Millisecond)
			}
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
		})
	}
}
