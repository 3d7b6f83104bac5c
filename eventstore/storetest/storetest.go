// Package storetest is the conformance suite every eventstore.Store backend
// must pass. A backend runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.RunWith(t, storetest.Options{DensePositions: true}, func(t *testing.T) eventstore.Store {
//			s, err := Open(t.Context(), filepath.Join(t.TempDir(), "events.db"), Options{})
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// Every call of the factory must return a fresh, empty store opened with the
// default options, closed by the factory at t.Cleanup. The suite closes some
// stores itself first, so a second Close must be harmless: it returns nil or
// ErrClosed. Subtests run in parallel (go test -parallel bounds how many at
// a time) and are grouped by area: Append, AppendMany, Read, Subscribe,
// Concurrency, Lifecycle. RunWith returns when all of them have finished.
//
// The suite assumes only what the Store contract in package eventstore
// documents, plus two things the write path depends on: ReadStream sees
// every append that has returned (read-your-writes), and positions follow
// commit order, so an append that returned before another began has the
// smaller positions. ReadAll, on the other hand, may hold committed events
// back for a while (PostgreSQL returns only events no running transaction can
// precede): the suite reads the log up to a position an AppendResult named,
// and checks that nothing was written by appending a sentinel event (to
// stream "storetest-sentinel") and reading up to it. Where the contract left
// a choice open, the doc comment of the test says what the suite decided.
//
// The load test (Concurrency/Writers) is sized to run in well under a minute
// with -race on two cores. Scale it up with -storetest.heavy, or set
// STORETEST_EVENTS to the approximate number of events to write.
package storetest

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

var heavy = flag.Bool("storetest.heavy", false, "run the storetest load test at full size (32 writers x 2000 appends)")

// EnvEvents names the environment variable that sets the approximate
// number of events the load test writes.
const EnvEvents = "STORETEST_EVENTS"

// Options declares what a backend guarantees beyond the contract, and sizes
// the suite. The zero value is what Run uses.
type Options struct {
	// DensePositions declares that positions are 1, 2, 3, ... in commit
	// order, with no gaps (SQLite). Without it the suite only assumes that
	// positions are greater than zero and strictly increasing (PostgreSQL).
	DensePositions bool
	// Prune declares that the store is an eventstore.Pruner: the Prune
	// group checks it.
	Prune bool
	// Timeout bounds each subtest but the load test, so a backend that hangs
	// fails with a message instead of stalling the test binary (default 1
	// minute, never beyond the test binary's own deadline).
	Timeout time.Duration
	// Load sizes the load test; zero fields take the defaults.
	Load Load
}

// Load sizes the load test: Writers goroutines each make Appends appends of
// 1 to 3 events (or retries, or deliberate conflicts) over Streams streams,
// while subscribers and a ReadAll tailer follow the log.
type Load struct {
	Writers int           // default 16; 32 with -storetest.heavy
	Appends int           // per writer; default 250; 2000 with -storetest.heavy
	Streams int           // default 64; 256 with -storetest.heavy
	Timeout time.Duration // default 5 minutes; 30 with -storetest.heavy
}

// Run runs the conformance suite with the default Options.
func Run(t *testing.T, newStore func(t *testing.T) eventstore.Store) {
	t.Helper()
	RunWith(t, Options{}, newStore)
}

// RunWith runs the conformance suite. newStore must return a fresh, empty
// store each time it is called and close it at t.Cleanup.
func RunWith(t *testing.T, opts Options, newStore func(t *testing.T) eventstore.Store) {
	t.Helper()
	h := &harness{opts: opts.withDefaults(), newStore: newStore}
	groups := []struct {
		name  string
		tests []suiteTest
	}{
		{"Append", appendTests},
		{"AppendMany", appendManyTests},
		{"Read", readTests},
		{"Subscribe", subscribeTests},
		{"Concurrency", concurrencyTests},
		{"Lifecycle", lifecycleTests},
	}
	if opts.Prune {
		groups = append(groups, struct {
			name  string
			tests []suiteTest
		}{"Prune", pruneTests})
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, st := range g.tests {
				t.Run(st.name, func(t *testing.T) {
					t.Parallel()
					st.run(t, h)
				})
			}
		})
	}
}

type suiteTest struct {
	name string
	run  func(t *testing.T, h *harness)
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	return o
}

// load resolves the load test's size: defaults, then Options.Load, then
// -storetest.heavy, then STORETEST_EVENTS.
func (h *harness) load(t *testing.T) Load {
	t.Helper()
	l := Load{Writers: 16, Appends: 250, Streams: 64, Timeout: 5 * time.Minute}
	o := h.opts.Load
	if o.Writers > 0 {
		l.Writers = o.Writers
	}
	if o.Appends > 0 {
		l.Appends = o.Appends
	}
	if o.Streams > 0 {
		l.Streams = o.Streams
	}
	if o.Timeout > 0 {
		l.Timeout = o.Timeout
	}
	if *heavy {
		l.Writers = max(l.Writers, 32)
		l.Appends = max(l.Appends, 2000)
		l.Streams = max(l.Streams, 256)
		l.Timeout = max(l.Timeout, 30*time.Minute)
	}
	if v := os.Getenv(EnvEvents); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: want a positive number of events", EnvEvents, v)
		}
		// About 0.85 of the appends write new events, 2 on average.
		l.Appends = max(1, int(float64(n)/(1.7*float64(l.Writers))))
	}
	return l
}

func (l Load) String() string {
	return fmt.Sprintf("%d writers x %d appends over %d streams", l.Writers, l.Appends, l.Streams)
}
