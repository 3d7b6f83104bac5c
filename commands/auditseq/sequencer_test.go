package auditseq_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/commands/auditseq"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/sqlite"
)

const waitTimeout = 30 * time.Second

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cairn.db"), sqlite.Options{Synchronous: "normal", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// logAccess appends n access records to stream, with one unrelated event
// in between each, and returns their positions.
func logAccess(t *testing.T, s eventstore.Store, stream string, n int) []uint64 {
	t.Helper()
	var positions []uint64
	for i := range n {
		rec := audit.Record{Time: time.Unix(int64(i+1), 0), Action: "GET /v1/sessions", Outcome: audit.Success, Status: 200, RequestID: fmt.Sprintf("%s-%d", stream, i)}
		data, _ := json.Marshal(domain.AccessLogged{Record: rec})
		res, err := s.Append(context.Background(), stream, eventstore.Any,
			eventstore.EventData{ID: eventstore.NewEventID(), Type: "test.noise", Data: []byte(`{}`)},
			eventstore.EventData{ID: eventstore.NewEventID(), Type: domain.TypeAccessLogged, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		positions = append(positions, res.Position)
	}
	return positions
}

// tracker learns every head the sequencers seal, to wait on it.
type tracker struct {
	mu     sync.Mutex
	seq    uint64
	notify chan struct{}
}

func newTracker() *tracker { return &tracker{notify: make(chan struct{}, 1)} }

func (tr *tracker) sealed(h audit.Head) {
	tr.mu.Lock()
	tr.seq = max(tr.seq, h.Seq)
	tr.mu.Unlock()
	select {
	case tr.notify <- struct{}{}:
	default:
	}
}

func (tr *tracker) wait(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(waitTimeout)
	for {
		tr.mu.Lock()
		seq := tr.seq
		tr.mu.Unlock()
		if seq >= uint64(n) {
			return
		}
		select {
		case <-tr.notify:
		case <-timeout:
			t.Fatalf("the chain reached seq %d, want %d", seq, n)
		}
	}
}

// start runs a sequencer reporting to tr; stop ends it (also at cleanup).
func start(t *testing.T, s eventstore.Store, tr *tracker) (stop func()) {
	t.Helper()
	return startWith(t, s, tr, nil)
}

// startWith is start with the sequencer's metrics registered in reg (none
// when nil).
func startWith(t *testing.T, s eventstore.Store, tr *tracker, reg prometheus.Registerer) (stop func()) {
	t.Helper()
	seq, err := auditseq.New(auditseq.Config{Batch: 7, Logger: slog.New(slog.DiscardHandler), OnSealed: tr.sealed, Registerer: reg}, s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- seq.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// logBatch appends one access.batch-logged event of n records with
// request ids of pad bytes, and returns its position once per record.
func logBatch(t *testing.T, s eventstore.Store, n, pad int) []uint64 {
	t.Helper()
	var recs []audit.Record
	for i := range n {
		recs = append(recs, audit.Record{Time: time.Unix(int64(i+1), 0), Action: "GET /v1/auth/whoami", Outcome: audit.Success, Status: 200,
			RequestID: fmt.Sprintf("b%d-%s", i, strings.Repeat("p", pad))})
	}
	data, _ := json.Marshal(domain.AccessBatchLogged{Records: recs})
	res, err := s.Append(context.Background(), domain.AccessLogStream, eventstore.Any,
		eventstore.EventData{ID: eventstore.NewEventID(), Type: domain.TypeAccessBatchLogged, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	positions := make([]uint64, n)
	for i := range positions {
		positions[i] = res.Position
	}
	return positions
}

// chain reads the audit stream, checks the chain and returns its records.
func chain(t *testing.T, s eventstore.Store) []domain.SealedRecord {
	t.Helper()
	evs, err := s.ReadStream(context.Background(), domain.AuditStream, eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []domain.SealedRecord
	var recs []audit.Record
	for _, e := range evs {
		if e.Type != domain.TypeAuditSealed || len(e.Data) > domain.AuditPayloadBytes {
			t.Fatalf("audit stream revision %d: %s of %d bytes", e.Revision, e.Type, len(e.Data))
		}
		ev, err := domain.DecodeEvent(e.Type, e.Version, e.Data)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range ev.(domain.AuditSealed).Records {
			out = append(out, r)
			recs = append(recs, r.Record)
		}
	}
	if _, err := audit.Verify(slices.Values(recs)); err != nil {
		t.Fatalf("the chain does not verify: %v", err)
	}
	return out
}

func sources(recs []domain.SealedRecord) []uint64 {
	var out []uint64
	for _, r := range recs {
		out = append(out, r.SourcePosition)
	}
	return out
}

// TestSequencerSealsBatches: batches of the access log are sealed whole,
// in log order with the single records of mutating requests, and a run
// too large for one event is split into several events of one append.
func TestSequencerSealsBatches(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	var want []uint64
	want = append(want, logBatch(t, s, 20, 0)...) // more than Batch (7): not split
	want = append(want, logAccess(t, s, "session-x", 2)...)
	want = append(want, logBatch(t, s, 1, 0)...)
	want = append(want, logBatch(t, s, 3000, 300)...) // ~1 MB sealed
	tr := newTracker()
	stop := start(t, s, tr)
	tr.wait(t, len(want))
	stop()
	if got := sources(chain(t, s)); !slices.Equal(got, want) {
		t.Fatalf("sealed sources %v, want %v", got, want)
	}
	evs, err := s.ReadStream(context.Background(), domain.AuditStream, eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 4 {
		t.Fatalf("%d records sealed in %d events; want the large run split", len(want), len(evs))
	}
	tip, err := auditseq.Resume(context.Background(), s)
	if err != nil || tip.Head.Seq != uint64(len(want)) || tip.After != want[len(want)-1] || tip.Revision != evs[len(evs)-1].Revision {
		t.Fatalf("Resume = %+v, %v", tip, err)
	}
}

func TestSequencerSealsEveryRecordOnceInLogOrder(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	want := append(logAccess(t, s, domain.AccessLogStream, 10), logAccess(t, s, "session-x", 5)...)
	tr := newTracker()
	start(t, s, tr)
	tr.wait(t, len(want))
	if got := sources(chain(t, s)); !slices.Equal(got, want) {
		t.Fatalf("sealed sources %v, want %v", got, want)
	}
}

// TestSequencerResumes: a new sequencer continues the chain after the
// last sealed record, sealing nothing twice.
func TestSequencerResumes(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	first := logAccess(t, s, domain.AccessLogStream, 9)
	tr := newTracker()
	stop := start(t, s, tr)
	tr.wait(t, len(first))
	stop()
	tip, err := auditseq.Resume(context.Background(), s)
	if err != nil || tip.Head.Seq != uint64(len(first)) || tip.After != first[len(first)-1] {
		t.Fatalf("Resume = %+v, %v", tip, err)
	}
	second := logAccess(t, s, domain.AccessLogStream, 4)
	start(t, s, tr)
	tr.wait(t, len(first)+len(second))
	if got, want := sources(chain(t, s)), append(first, second...); !slices.Equal(got, want) {
		t.Fatalf("sealed sources %v, want %v", got, want)
	}
}

// TestSequencerMetrics: the metrics count each record sealed once, and
// the head gauge starts from the resumed chain.
func TestSequencerMetrics(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	first := logAccess(t, s, domain.AccessLogStream, 9)
	tr := newTracker()
	reg := prometheus.NewPedanticRegistry()
	stop := startWith(t, s, tr, reg)
	tr.wait(t, len(first))
	stop()
	if got := value(t, reg, "cairn_audit_records_sealed_total"); got != float64(len(first)) {
		t.Fatalf("sealed_total = %v, want %d", got, len(first))
	}

	// A new process resumes the chain: its head gauge says so before it
	// seals anything, its counter counts only what it seals.
	second := logAccess(t, s, domain.AccessLogStream, 4)
	reg = prometheus.NewPedanticRegistry()
	startWith(t, s, tr, reg)
	tr.wait(t, len(first)+len(second))
	if got := value(t, reg, "cairn_audit_records_sealed_total"); got != float64(len(second)) {
		t.Fatalf("sealed_total after resuming = %v, want %d", got, len(second))
	}
	if got := value(t, reg, "cairn_audit_chain_seq"); got != float64(len(first)+len(second)) {
		t.Fatalf("chain_seq = %v, want %d", got, len(first)+len(second))
	}
	if _, err := auditseq.New(auditseq.Config{Registerer: reg}, s); err == nil {
		t.Fatal("a second sequencer registered the same metrics")
	}
}

// value reads a counter's or gauge's value from reg.
func value(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name || len(f.GetMetric()) != 1 {
			continue
		}
		m := f.GetMetric()[0]
		if c := m.GetCounter(); c != nil {
			return c.GetValue()
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("no metric %s among %d", name, len(families))
	return 0
}

// TestConcurrentSequencersNeverFork: two sequencers (a lease handover gone
// wrong) still produce one chain with every record once.
func TestConcurrentSequencersNeverFork(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	tr := newTracker()
	start(t, s, tr)
	start(t, s, tr)
	var mu sync.Mutex
	var want []uint64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := logAccess(t, s, fmt.Sprintf("access-w%d", w), 25)
			mu.Lock()
			want = append(want, p...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(want)
	tr.wait(t, len(want))
	if got := sources(chain(t, s)); !slices.Equal(got, want) {
		t.Fatalf("sealed sources %v, want %v", got, want)
	}
}

// TestResumeNamesALegacyChain: a chain of the pre-batching format is
// refused with an error that says what it is and what to do.
func TestResumeNamesALegacyChain(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	if _, err := s.Append(context.Background(), domain.AuditStream, eventstore.NoStream,
		eventstore.EventData{ID: eventstore.NewEventID(), Type: "audit.recorded", Data: []byte(`{"v":1,"seq":1}`)}); err != nil {
		t.Fatal(err)
	}
	_, err := auditseq.Resume(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "pre-release") || !strings.Contains(err.Error(), "new data directory") {
		t.Fatalf("Resume = %v", err)
	}
}
