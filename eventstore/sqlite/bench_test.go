package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

// benchEvent is an event of realistic size (about 200 bytes of data and
// some metadata), like the ones of cmd bench.
func benchEvent(i int) eventstore.EventData {
	return eventstore.EventData{
		ID:      eventstore.NewEventID(),
		Type:    "session.requested",
		Version: 1,
		Data: json.RawMessage(fmt.Sprintf(`{"session_id":"0192f0c4-7c1e-7cc1-9a5e-%012d","image":"localhost/cairn/base:latest",`+
			`"resources":{"cpu":"2","mem":"4294967296","cuda.shares":"0.5"},"status":"PENDING","seq":%d}`, i, i)),
		Metadata: eventstore.Metadata{Actor: "admin@cairn.local", AccessKey: "AKIAIOSFODNN7EXAMPLE", RequestID: "bench"},
	}
}

// BenchmarkAppend measures single-event appends, each to its own stream,
// from 1 and 16 concurrent writers (durable: synchronous=FULL).
func BenchmarkAppend(b *testing.B) {
	for _, writers := range []int{1, 16} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := openTestStore(b, Options{})
			ctx := context.Background()
			var n atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := n.Add(1)
						if i > int64(b.N) {
							return
						}
						if _, err := s.Append(ctx, fmt.Sprintf("s-%d", i), eventstore.NoStream, benchEvent(int(i))); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
			b.ReportMetric(float64(s.writer.appendsRun.Load())/float64(s.writer.batches.Load()), "appends/tx")
		})
	}
}

// BenchmarkReadAll measures replay: pages of 5000 events in position order.
func BenchmarkReadAll(b *testing.B) {
	const total = 100_000
	s := openTestStore(b, Options{})
	ctx := context.Background()
	batch := make([]eventstore.EventData, 1000)
	for k := 0; k < total/len(batch); k++ {
		for i := range batch {
			batch[i] = benchEvent(k*len(batch) + i)
		}
		mustAppend(b, s, fmt.Sprintf("replay-%d", k), eventstore.NoStream, batch...)
	}
	b.Run("store", func(b *testing.B) {
		read := 0
		for b.Loop() {
			var after uint64
			for {
				page, err := s.ReadAll(ctx, after, 5000)
				if err != nil {
					b.Fatal(err)
				}
				if len(page) == 0 {
					break
				}
				read += len(page)
				after = page[len(page)-1].Position
			}
		}
		b.ReportMetric(float64(read)/b.Elapsed().Seconds(), "events/s")
	})
	// raw is the floor: the same keyset pages through database/sql on the
	// same pool, scanning into plain variables.
	b.Run("raw", func(b *testing.B) {
		read := 0
		for b.Loop() {
			var after int64
			for {
				rows, err := s.DB().QueryContext(ctx, `SELECT `+eventColumns+` FROM events WHERE position > ? ORDER BY position LIMIT 5000`, after)
				if err != nil {
					b.Fatal(err)
				}
				var (
					pos, rev, ver, rec int64
					id, data, md       []byte
					stream, typ        string
					n                  int
				)
				for rows.Next() {
					if err := rows.Scan(&pos, &id, &stream, &rev, &typ, &ver, &data, &md, &rec); err != nil {
						b.Fatal(err)
					}
					n++
				}
				if err := rows.Close(); err != nil {
					b.Fatal(err)
				}
				if n == 0 {
					break
				}
				read += n
				after = pos
			}
		}
		b.ReportMetric(float64(read)/b.Elapsed().Seconds(), "events/s")
	})
}
