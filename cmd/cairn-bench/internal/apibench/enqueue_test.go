package apibench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestEnqueueConfigValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	if err := DefaultEnqueueConfig().Validate(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	err := EnqueueConfig{Clients: 0, Duration: 0, Settle: -1, Queues: []int{10, 5}}.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"clients", "duration", "settle", "ascending"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %s", err, want)
		}
	}
	if err := (EnqueueConfig{Clients: 1, Duration: time.Second}).Validate(); err == nil || !strings.Contains(err.Error(), "queue length") {
		t.Errorf("no queue lengths: %v", err)
	}
}

// TestEnqueueTargets: the flatness compares the longest queue's rate with
// the shortest's, and the report names every target with its verdict.
func TestEnqueueTargets(t *testing.T) {
	t.Parallel()
	rounds := []EnqueueRound{
		{Queue: 0, Requests: 10_000, Elapsed: 4 * time.Second, P99: 20 * time.Millisecond, Memory: Memory{Heap: 100 << 20, RSS: 200 << 20}},
		{Queue: 50_000, Requests: 9_000, Elapsed: 4 * time.Second, P99: 60 * time.Millisecond, Memory: Memory{Heap: 100<<20 + 50_000*300, RSS: 200<<20 + 50_000*1000}},
	}
	if heap, rss := MemoryPerSession(rounds); heap != 300 || rss != 1000 {
		t.Errorf("memory per session %v heap, %v RSS; want 300 and 1000", heap, rss)
	}
	if got := EnqueueFlatness(rounds); got != 0.9 {
		t.Fatalf("flatness %v, want 0.9", got)
	}
	var b bytes.Buffer
	if err := WriteEnqueueTable(&b, rounds); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lowest 2250) ✓", "highest 60.00 ms) ✗", "0.90x ≥ 0.8x ✓", "300 bytes of live Go heap, 1000 bytes of RSS", "100.0 MiB"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// TestFillStopsAtTheFirstRefusal: filling sends what it is asked, and a
// status other than 201 ends it with an error naming the status.
func TestFillStopsAtTheFirstRefusal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, err := fill(ctx, 4, 100, func(context.Context) (int, error) { return 201, nil })
	if err != nil || n != 100 {
		t.Fatalf("fill = %d, %v; want 100", n, err)
	}
	n, err = fill(ctx, 4, 100, func(context.Context) (int, error) { return 403, nil })
	if err == nil || !strings.Contains(err.Error(), "status 403") || n != 0 {
		t.Fatalf("fill = %d, %v; want the refusal", n, err)
	}
}

// TestMeasureMemory reads this process's own memory: a live heap and a
// resident set at least as large.
func TestMeasureMemory(t *testing.T) {
	m := MeasureMemory()
	if m.Heap == 0 || m.RSS < m.Heap {
		t.Errorf("memory %+v: want a heap, and an RSS at least as large", m)
	}
}
