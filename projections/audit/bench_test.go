package audit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	auditrm "github.com/cairnhq/cairn/projections/audit"
)

// BenchmarkProjectSealedRecords measures the read model's cost per sealed
// record (b.N records in runs of 100, as the sequencer appends them under
// load): decoding, the rows and their indexes, the commits.
func BenchmarkProjectSealedRecords(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			var be *projectiontest.Backend
			if backend == "sqlite" {
				be = projectiontest.SQLite(b)
			} else {
				be = projectiontest.Postgres(b)
			}
			ctx := context.Background()
			head := audit.Genesis
			// appendRuns appends n sealed records in runs of 100, as the
			// sequencer does under load, and returns the last position.
			appendRuns := func(n int) uint64 {
				const run = 100
				var last uint64
				for i := 0; i < n; i += run {
					var recs []audit.Record
					for j := range min(run, n-i) {
						recs = append(recs, audit.Record{Time: time.Now(), UserID: fmt.Sprint("user-", j%3), AccessKey: "AKIAEXAMPLE",
							Action: "GET /v1/auth/whoami", EntityType: "auth", Outcome: audit.Success, Status: 200, Duration: 1000,
							ClientIP: "127.0.0.1", RequestID: fmt.Sprint("req-", i+j)})
					}
					sealed, next, err := audit.SealAll(head, recs)
					if err != nil {
						b.Fatal(err)
					}
					head = next
					var ev domain.AuditSealed
					for _, r := range sealed {
						ev.Records = append(ev.Records, domain.SealedRecord{Record: r, SourcePosition: 1})
					}
					data, err := eventstore.NewEvent(domain.TypeAuditSealed, ev, eventstore.Metadata{})
					if err != nil {
						b.Fatal(err)
					}
					res, err := be.Store.Append(ctx, domain.AuditStream, eventstore.Any, data)
					if err != nil {
						b.Fatal(err)
					}
					last = res.Position
				}
				return last
			}
			// Warm up: the read model's statements are prepared after
			// their first use.
			rm := auditrm.New(be.DB, be.Store)
			warm := projectiontest.Start(b, be.DB, be, rm, projections.Options{})
			warm.WaitFor(b, appendRuns(200))
			if err := warm.Stop(); err != nil {
				b.Fatal(err)
			}
			last := appendRuns(b.N)
			b.ResetTimer()
			projectiontest.Start(b, be.DB, be, rm, projections.Options{}).WaitFor(b, last)
		})
	}
}
