// Package await waits in tests for a condition that another process, the
// file system or the network brings about and that no event announces: a
// row in PostgreSQL, a file on disk, an HTTP answer. It polls with a
// deadline; code that only uses timers and channels in-process is tested in
// a testing/synctest bubble instead.
package await

import (
	"testing"
	"time"
)

// Poll intervals: the first poll follows at once, later ones back off from
// minPoll to maxPoll, so a quick condition is seen quickly and a slow one
// does not cost the machine a busy loop.
const (
	minPoll = time.Millisecond
	maxPoll = 50 * time.Millisecond
)

// Until calls cond until it returns true, and fails t with what (the awaited
// condition, as a noun phrase) if it has not within timeout. cond runs on
// the test's goroutine and may itself fail t.
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for wait := minPoll; !cond(); wait = min(2*wait, maxPoll) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(wait)
	}
}
