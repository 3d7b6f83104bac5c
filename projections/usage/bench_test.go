package usage_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/usage"
)

// BenchmarkQuery answers a 30-day query over a history of n one-kernel
// sessions, 100 a day (so the history is n/100 days long), of 200 users
// in 4 domains, each allocated for 3 hours (some across midnight), the
// read model rebuilt from the log (its rate is logged). The cost follows the rows in the
// range, not the size of the store: go test -run '^$' -bench Query
// ./projections/usage/ (PostgreSQL under scripts/with-postgres.sh).
func BenchmarkQuery(b *testing.B) {
	for _, open := range []struct {
		name string
		open func(testing.TB) *projectiontest.Backend
	}{{"sqlite", projectiontest.SQLite}, {"postgres", projectiontest.Postgres}} {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/sessions=%d", open.name, n), func(b *testing.B) {
				be := open.open(b)
				rm := usage.New(be.DB)
				if err := projections.Setup(ctx, be.DB, rm); err != nil {
					b.Fatal(err)
				}
				history(b, be.Store, n)
				p, err := projections.NewProjector(be.DB, be.Store, rm, projections.Options{Logger: projectiontest.Discard})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := p.Rebuild(ctx, nil); err != nil {
					b.Fatal(err)
				}
				b.Logf("rebuilt from %d events in %v (%.0f events/s)", 4*n, time.Since(start).Round(time.Millisecond), float64(4*n)/time.Since(start).Seconds())
				end := histStart.AddDate(0, 0, n/perDay)
				for _, q := range []struct {
					name string
					q    usage.Query
				}{
					{"domain", usage.Query{GroupBy: usage.ByUser, Domain: "d1"}},
					{"user", usage.Query{GroupBy: usage.ByUser, Domain: "d1", UserID: "u1"}},
					{"all-by-domain", usage.Query{GroupBy: usage.ByDomain}},
				} {
					b.Run(q.name, func(b *testing.B) {
						q := q.q
						q.From, q.To, q.Now = end.AddDate(0, 0, -30).Format(usage.DayLayout), end.AddDate(0, 0, -1).Format(usage.DayLayout), end
						for b.Loop() {
							rows, err := rm.Usage(ctx, q)
							if err != nil || len(rows) == 0 {
								b.Fatalf("%d rows, %v", len(rows), err)
							}
						}
					})
				}
			})
		}
	}
}

const perDay = 100

var histStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// history appends the events of n sessions (requested, scheduled,
// allocated, released), 256 sessions per append; it returns the last
// position.
func history(b *testing.B, store eventstore.Store, n int) uint64 {
	b.Helper()
	ev := func(e domain.Event) eventstore.EventData {
		d, err := eventstore.NewEvent(e.EventType(), e, eventstore.Metadata{})
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	slots := domain.Slots{domain.SlotCPU: domain.Units(4), domain.SlotMem: domain.Units(16 << 30), domain.SlotCUDAShares: 500}
	var last uint64
	for lo := 0; lo < n; lo += 256 {
		var parts []eventstore.StreamAppend
		var agent []eventstore.EventData
		for i := lo; i < min(n, lo+256); i++ {
			sid, kid := uuid.New(), uuid.New()
			start := histStart.Add(time.Duration(i) * 24 * time.Hour / perDay)
			user := i % 200
			parts = append(parts, eventstore.StreamAppend{Stream: domain.SessionStream(sid).String(), Expected: eventstore.Any, Events: []eventstore.EventData{
				ev(domain.SessionRequested{SessionID: sid, Name: "s", Owner: domain.Owner{UserID: fmt.Sprintf("u%d", user), AccessKey: "AK"},
					Domain: fmt.Sprintf("d%d", user%4), Project: "p", ResourceGroup: "default", Type: domain.SessionBatch, Image: "i",
					Kernels: []domain.KernelSpec{{KernelID: kid, Role: domain.KernelMain, Slots: slots}}, At: start}),
				ev(domain.SessionScheduled{Kernels: []domain.KernelPlacement{{KernelID: kid, AgentID: "node-1"}}, At: start}),
			}})
			agent = append(agent,
				ev(domain.AgentAllocated{KernelID: kid, SessionID: sid, Slots: slots, At: start}),
				ev(domain.AgentReleased{KernelID: kid, SessionID: sid, Reason: "removed", At: start.Add(3 * time.Hour)}))
		}
		parts = append(parts, eventstore.StreamAppend{Stream: domain.AgentStream("node-1").String(), Expected: eventstore.Any, Events: agent})
		res, err := store.AppendMany(ctx, parts...)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			last = max(last, r.Position)
		}
	}
	return last
}
