// Package storebench measures an event store against a raw baseline
// measured in the same run on the same database: plain INSERTs of the same
// row shape at the same concurrency, and a plain ordered SELECT scan. It
// backs `cairn-bench store` (`make bench`).
package storebench

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

// Baseline is the raw database work an append or a replay boils down to,
// done directly on the backend's database without the store's logic.
type Baseline interface {
	// Reset creates (or empties) the raw table.
	Reset(ctx context.Context) error
	// Insert writes rows in one transaction.
	Insert(ctx context.Context, rows []Row) error
	// Scan reads every raw row in order with keyset pages of pageSize and
	// returns how many it read.
	Scan(ctx context.Context, pageSize int) (int, error)
	// Close drops the raw table and releases connections.
	Close() error
}

// Settler is implemented by baselines whose database needs housekeeping
// before a fair read comparison (PostgreSQL sets per-row commit hint bits
// on the first read after a write; VACUUM does it for both tables).
type Settler interface {
	Settle(ctx context.Context) error
}

// Row is the shape of one stored event.
type Row struct {
	ID       [16]byte
	Stream   string
	Revision int64
	Type     string
	Version  int
	Data     []byte
	Metadata []byte
}

// Config sizes the benchmark.
type Config struct {
	// Duration of each append scenario.
	Duration time.Duration
	// ReplayEvents is how many events the replay scenario reads.
	ReplayEvents int
	// LagRate is the append rate of the lag scenario (per second) and
	// LagDuration how long it runs.
	LagRate     int
	LagDuration time.Duration
	// Writers for the concurrent scenario.
	Writers int
	// Rounds splits each append scenario into alternating Cairn and raw
	// runs (default 4).
	Rounds int
	// Scenarios, if not empty, runs only these of Scenarios() (for
	// profiling one case); the default runs them all.
	Scenarios []string
	// Progress, if set, is told what runs.
	Progress func(format string, args ...any)
}

// DefaultConfig is what `make bench` runs.
func DefaultConfig() Config {
	return Config{
		Duration:     8 * time.Second,
		ReplayEvents: 1_000_000,
		LagRate:      1000,
		LagDuration:  5 * time.Second,
		Writers:      16,
		Rounds:       4,
	}
}

// Result is one line of the table.
type Result struct {
	Backend  string
	Scenario string
	Unit     string
	Cairn    float64
	Raw      float64
}

// Ratio is Cairn / Raw.
func (r Result) Ratio() float64 {
	if r.Raw == 0 {
		return 0
	}
	return r.Cairn / r.Raw
}

// Scenario names, as Config.Scenarios takes them.
const (
	ScenarioAppendOne     = "append-1"     // 1 writer x 1 event
	ScenarioAppendWriters = "append-n"     // Config.Writers writers x 1 event
	ScenarioAppendBatch   = "append-batch" // 1 writer x batch of 100
	ScenarioReplay        = "replay"
	ScenarioLag           = "lag"
)

// Scenarios are the names of every scenario, in the order they run.
func Scenarios() []string {
	return []string{ScenarioAppendOne, ScenarioAppendWriters, ScenarioAppendBatch, ScenarioReplay, ScenarioLag}
}

// Validate reports names in c.Scenarios that are not scenarios.
func (c Config) Validate() error {
	for _, name := range c.Scenarios {
		if !slices.Contains(Scenarios(), name) {
			return fmt.Errorf("unknown scenario %q (%s)", name, strings.Join(Scenarios(), ", "))
		}
	}
	return nil
}

// runs says whether the scenario named name is selected.
func (c Config) runs(name string) bool {
	return len(c.Scenarios) == 0 || slices.Contains(c.Scenarios, name)
}

func (c Config) rounds() int {
	if c.Rounds <= 0 {
		return 4
	}
	return c.Rounds
}

func (c Config) progress(format string, args ...any) {
	if c.Progress != nil {
		c.Progress(format, args...)
	}
}

// percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

func sortDurations(d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// payload is a realistic event body (~200 bytes).
func payload(i int) []byte {
	return []byte(fmt.Sprintf(`{"session_id":"0192f0c4-7c1e-7cc1-9a5e-%012d","image":"localhost/cairn/base:latest","resources":{"cpu":"2","mem":"4294967296","cuda.shares":"0.5"},"status":"PENDING","seq":%d}`, i, i))
}

var metadata = []byte(`{"actor":"admin@cairn.local","access_key":"AKIAIOSFODNN7EXAMPLE","request_id":"bench"}`)

func newEvent(i int) eventstore.EventData {
	return eventstore.EventData{
		ID:       eventstore.NewEventID(),
		Type:     "session.requested",
		Version:  1,
		Data:     payload(i),
		Metadata: eventstore.Metadata{Actor: "admin@cairn.local", AccessKey: "AKIAIOSFODNN7EXAMPLE", RequestID: "bench"},
	}
}

func newRow(stream string, rev int64, i int) Row {
	return Row{ID: eventstore.NewEventID(), Stream: stream, Revision: rev, Type: "session.requested", Version: 1, Data: payload(i), Metadata: metadata}
}
