package await_test

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cairnhq/cairn/infra/await"
)

// TestUntilReturnsOnceTheConditionHolds: Until polls until cond is true,
// and calls it no more after that.
func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	await.Until(t, time.Minute, "the third call", func() bool { return calls.Add(1) == 3 })
	if n := calls.Load(); n != 3 {
		t.Fatalf("cond called %d times, want 3", n)
	}
}

// failRecorder records Fatalf instead of ending the test.
type failRecorder struct {
	testing.TB
	failed bool
}

func (r *failRecorder) Helper() {}

func (r *failRecorder) Fatalf(string, ...any) {
	r.failed = true
	panic(r)
}

// TestUntilFailsAfterTheTimeout: a condition that never holds fails the
// test once the timeout has passed, not before. In a synctest bubble the
// clock only moves when Until sleeps, so the hour passes at once.
func TestUntilFailsAfterTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &failRecorder{TB: t}
		start := time.Now()
		func() {
			defer func() {
				if p := recover(); p != nil && p != any(r) {
					panic(p)
				}
			}()
			await.Until(r, time.Hour, "nothing", func() bool { return false })
		}()
		if !r.failed {
			t.Fatal("Until returned for a condition that never held")
		}
		if waited := time.Since(start); waited < time.Hour {
			t.Fatalf("Until gave up after %s, before its timeout of an hour", waited)
		}
	})
}
