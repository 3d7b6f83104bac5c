package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/pgtest"
)

// Benchmarks compare the store with plain SQL on the same server, in the
// same run (the machines are noisy: read the ratios). Run with
// scripts/with-postgres.sh go test -run '^$' -bench . ./eventstore/postgres/

const benchWriters = 16

var benchData = []byte(`{"session_id":"0192f0c4-7c1e-7cc1-9a5e-000000000001","image":"localhost/cairn/base:latest","resources":{"cpu":"2","mem":"4294967296","cuda.shares":"0.5"},"status":"PENDING"}`)

var benchMetadata = eventstore.Metadata{Actor: "admin@cairn.local", AccessKey: "AKIAIOSFODNN7EXAMPLE", RequestID: "bench"}

func benchEvent() eventstore.EventData {
	return eventstore.EventData{ID: eventstore.NewEventID(), Type: "session.requested", Version: 1, Data: benchData, Metadata: benchMetadata}
}

// runWriters runs benchWriters goroutines sharing b.N operations.
func runWriters(b *testing.B, op func(w, k int) error) {
	var next atomic.Int64
	errs := make(chan error, benchWriters)
	b.ResetTimer()
	start := time.Now()
	cpu0 := processCPU(b)
	for w := range benchWriters {
		go func() {
			for k := 0; ; k++ {
				if next.Add(1) > int64(b.N) {
					errs <- nil
					return
				}
				if err := op(w, k); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range benchWriters {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "client-cpu-µs/op")
}

// processCPU is the CPU time (user and system) this process used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAppend16Writers: one event per append, 16 concurrent writers,
// each on its own streams with an exact expected revision.
func BenchmarkAppend16Writers(b *testing.B) {
	s := openBenchStore(b, Options{})
	runWriters(b, func(w, k int) error {
		_, err := s.Append(context.Background(), fmt.Sprintf("bench-%d-%d", w, k/100), eventstore.Exact(int64(k%100)-1), benchEvent())
		return err
	})
}

func BenchmarkAppend16WritersNoNotify(b *testing.B) {
	s := openBenchStore(b, Options{DisableNotify: true})
	runWriters(b, func(w, k int) error {
		_, err := s.Append(context.Background(), fmt.Sprintf("bench-%d-%d", w, k/100), eventstore.Exact(int64(k%100)-1), benchEvent())
		return err
	})
}

// BenchmarkAppend16WritersFenced: the same appends fenced by a lease that
// stays at their epoch (a leader's writes: the lease's shared lock and
// its epoch read in each append's transaction).
func BenchmarkAppend16WritersFenced(b *testing.B) {
	s := openBenchStore(b, Options{})
	var epoch int64
	if err := s.Pool().QueryRow(context.Background(), `SELECT out_epoch FROM `+quoteIdent(s.Schema())+`.lease_acquire('bench', 'bench', interval '1 hour')`).Scan(&epoch); err != nil {
		b.Fatal(err)
	}
	ctx := eventstore.WithFence(context.Background(), eventstore.Fence{Lease: "bench", Epoch: epoch})
	runWriters(b, func(w, k int) error {
		_, err := s.Append(ctx, fmt.Sprintf("bench-%d-%d", w, k/100), eventstore.Exact(int64(k%100)-1), benchEvent())
		return err
	})
}

// BenchmarkRawInsert16Writers: the same rows, inserted with plain INSERTs
// into a table of the same shape with a bigserial position.
func BenchmarkRawInsert16Writers(b *testing.B) {
	s := openBenchStore(b, Options{})
	ctx := context.Background()
	table := quoteIdent(s.Schema()) + ".raw_events"
	if _, err := s.Pool().Exec(ctx, `CREATE TABLE `+table+` (
  position    bigserial PRIMARY KEY,
  id          uuid NOT NULL UNIQUE,
  stream      text NOT NULL,
  revision    bigint NOT NULL,
  type        text NOT NULL,
  version     int NOT NULL,
  data        bytea NOT NULL,
  metadata    bytea NOT NULL,
  recorded_at timestamptz NOT NULL,
  UNIQUE (stream, revision))`); err != nil {
		b.Fatal(err)
	}
	md := []byte(`{"actor":"admin@cairn.local","access_key":"AKIAIOSFODNN7EXAMPLE","request_id":"bench"}`)
	runWriters(b, func(w, k int) error {
		_, err := s.Pool().Exec(ctx, `INSERT INTO `+table+` (id, stream, revision, type, version, data, metadata, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7, now())`,
			[16]byte(eventstore.NewEventID()), fmt.Sprintf("raw-%d-%d", w, k/100), int64(k%100), "session.requested", 1, benchData, md)
		return err
	})
}

// BenchmarkReplay reads 100k events with pages of 5000 (what a projection
// rebuild does) through ReadAll, and through a plain keyset scan of the same
// rows (no horizon, no metadata decoding) for comparison.
func BenchmarkReplay(b *testing.B) {
	s := openBenchStore(b, Options{})
	ctx := context.Background()
	const total, batch, page = 100_000, 1000, 5000
	evs := make([]eventstore.EventData, batch)
	for k := range total / batch {
		for i := range evs {
			evs[i] = benchEvent()
		}
		if _, err := s.Append(ctx, fmt.Sprintf("replay-%d", k), eventstore.NoStream, evs...); err != nil {
			b.Fatal(err)
		}
	}
	// Set hint bits once, so neither variant pays for it.
	if _, err := s.Pool().Exec(ctx, `VACUUM `+quoteIdent(s.Schema())+`.events`); err != nil {
		b.Fatal(err)
	}

	b.Run("ReadAll", func(b *testing.B) {
		start := time.Now()
		read := 0
		for range b.N {
			var after uint64
			for {
				evs, err := s.ReadAll(ctx, after, page)
				if err != nil {
					b.Fatal(err)
				}
				if len(evs) == 0 {
					break
				}
				read += len(evs)
				after = evs[len(evs)-1].Position
			}
		}
		if read != total*b.N {
			b.Fatalf("read %d events, want %d", read, total*b.N)
		}
		b.ReportMetric(float64(read)/time.Since(start).Seconds(), "events/s")
	})

	b.Run("RawScan", func(b *testing.B) {
		query := `SELECT position, id, stream, revision, type, version, data, metadata, recorded_at FROM ` +
			quoteIdent(s.Schema()) + `.events WHERE position > $1 ORDER BY position LIMIT $2`
		start := time.Now()
		read := 0
		for range b.N {
			var after int64
			for {
				rows, err := s.Pool().Query(ctx, query, after, page)
				if err != nil {
					b.Fatal(err)
				}
				var (
					id             [16]byte
					stream, typ    string
					revision       int64
					version        int32
					data, metadata []byte
					recordedAt     time.Time
				)
				tag, err := pgx.ForEachRow(rows, []any{&after, &id, &stream, &revision, &typ, &version, &data, &metadata, &recordedAt}, func() error { return nil })
				if err != nil {
					b.Fatal(err)
				}
				if tag.RowsAffected() == 0 {
					break
				}
				read += int(tag.RowsAffected())
			}
		}
		b.ReportMetric(float64(read)/time.Since(start).Seconds(), "events/s")
	})
}

func openBenchStore(b *testing.B, opts Options) *Store {
	b.Helper()
	url, schema := pgtest.Schema(b)
	opts.Schema, opts.Logger = schema, slog.New(slog.DiscardHandler)
	s, err := Open(context.Background(), url, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Error(err)
		}
	})
	return s
}
