package storetest_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/storetest"
)

func memFactory(sparse bool, bug string) func(t *testing.T) eventstore.Store {
	return func(t *testing.T) eventstore.Store {
		s := newMemStore(sparse, bug)
		t.Cleanup(func() {
			if err := s.Close(); err != nil && bug == "" {
				t.Errorf("Close at cleanup: %v", err)
			}
		})
		return s
	}
}

// The suite passes against a correct store with dense positions...
func TestMemStoreDense(t *testing.T) {
	storetest.RunWith(t, storetest.Options{DensePositions: true}, memFactory(false, ""))
}

// ...and with sparse positions, which it must not assume dense by default.
func TestMemStoreSparse(t *testing.T) {
	storetest.Run(t, memFactory(true, ""))
}

// The suite must fail against a store with a known defect. Each defect is
// planted in the memStore and the suite run in a child process (a failing
// *testing.T cannot be contained otherwise); the subtest named must fail.
func TestSuiteCatchesBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child test process per defect")
	}
	tests := []struct {
		bug   string
		dense bool
		run   string // the subtest that must fail
	}{
		{"", false, "Append/Result"}, // control: no bug, must pass
		{"no validation", false, "Append/Invalid"},
		{"ignore expected revision", false, "Append/ExpectedRevision"},
		{"ignore expected revision", false, "Concurrency/ExactRace"},
		{"first position", false, "Append/Result"},
		{"no idempotency", false, "Append/IdempotentRetry"},
		{"no idempotency", false, "Concurrency/ConcurrentRetries"},
		{"no idempotency", false, "AppendMany/IdempotentRetry"},
		{"many not atomic", false, "AppendMany/AllOrNothing"},
		{"", true, "Append/Result"}, // sparse positions declared dense
		{"backward ignores from", false, "Read/ReadStream"},
		{"missing stream is empty", false, "Read/StreamNotFound"},
		{"read all ignores limit", false, "Read/ReadAllPaging"},
		{"local time", false, "Read/RoundTrip"},
		{"compact data", false, "Read/RoundTrip"},
		{"keeps caller buffers", false, "Append/CallerBuffers"},
		{"caught up twice", false, "Subscribe/CatchUpThenLive"},
		{"positions before commit", false, "Concurrency/Writers"},
		{"positions before commit, per stream in order", false, "Concurrency/Writers"},
		{"close not idempotent", false, "Lifecycle/Close"},
		{"ignore context", false, "Lifecycle/CancelledContext"},
	}
	for _, tt := range tests {
		name := tt.bug
		if name == "" && tt.dense {
			name = "sparse declared dense"
		} else if name == "" {
			name = "control"
		}
		t.Run(name+" in "+tt.run, func(t *testing.T) {
			t.Parallel()
			group, sub, _ := strings.Cut(tt.run, "/")
			cmd := exec.CommandContext(t.Context(), os.Args[0],
				"-test.run=^TestMemStoreMutantChild$/^"+group+"$/^"+sub+"$", "-test.count=1", "-test.timeout=5m")
			cmd.Env = append(os.Environ(), "STORETEST_MUTANT="+tt.bug, fmt.Sprintf("STORETEST_MUTANT_DENSE=%v", tt.dense))
			out, err := cmd.CombinedOutput()
			failed := strings.Contains(string(out), "--- FAIL: TestMemStoreMutantChild/"+tt.run)
			if bytes.Contains(out, []byte("no tests to run")) {
				t.Fatalf("the child ran no test:\n%s", out)
			}
			if tt.bug == "" && !tt.dense {
				if err != nil || failed {
					t.Fatalf("control run without a defect failed: %v\n%s", err, out)
				}
				return
			}
			if err == nil || !failed {
				t.Fatalf("the suite did not catch %q in %s (exit: %v):\n%s", name, tt.run, err, out)
			}
		})
	}
}

// TestMemStoreMutantChild is the child process of TestSuiteCatchesBugs.
func TestMemStoreMutantChild(t *testing.T) {
	bug, ok := os.LookupEnv("STORETEST_MUTANT")
	if !ok {
		t.Skip("runs only as a child process of TestSuiteCatchesBugs")
	}
	dense := os.Getenv("STORETEST_MUTANT_DENSE") == "true"
	storetest.RunWith(t, storetest.Options{DensePositions: dense}, memFactory(true, bug))
}
