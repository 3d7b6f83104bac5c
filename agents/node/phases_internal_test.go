package node

import (
	"testing"
	"time"

	"github.com/cairnhq/cairn/agents/runtime"
)

// Pull progress is reported at most once per interval, and only when it
// moved by a step, finished a layer, or first learnt a size.
func TestPullThrottle(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	th := newPullThrottle(func() time.Time { return now })
	mb := int64(1 << 20)
	steps := []struct {
		after time.Duration
		p     runtime.PullProgress
		sent  bool
	}{
		{0, runtime.PullProgress{LayersTotal: 2}, true},                                                      // the first
		{3 * time.Second, runtime.PullProgress{LayersTotal: 2, BytesDone: 1, BytesTotal: 100 * mb}, true},    // first size
		{time.Second, runtime.PullProgress{LayersTotal: 2, BytesDone: 50 * mb, BytesTotal: 100 * mb}, false}, // too soon
		{2 * time.Second, runtime.PullProgress{LayersTotal: 2, BytesDone: 52 * mb, BytesTotal: 100 * mb}, true},
		{3 * time.Second, runtime.PullProgress{LayersTotal: 2, BytesDone: 55 * mb, BytesTotal: 100 * mb}, false}, // < 5 points
		{3 * time.Second, runtime.PullProgress{LayersDone: 1, LayersTotal: 2, BytesDone: 55 * mb, BytesTotal: 100 * mb}, true},
		{3 * time.Second, runtime.PullProgress{LayersDone: 2, LayersTotal: 2, BytesDone: 100 * mb, BytesTotal: 100 * mb}, true},
	}
	for i, s := range steps {
		now = now.Add(s.after)
		d, sent := th.offer(s.p)
		if sent != s.sent {
			t.Errorf("step %d (%+v): sent %v, want %v", i, s.p, sent, s.sent)
		}
		if d.BytesDone != s.p.BytesDone || d.LayersDone != s.p.LayersDone || d.BytesTotal != s.p.BytesTotal || d.LayersTotal != s.p.LayersTotal {
			t.Errorf("step %d: translated %+v from %+v", i, d, s.p)
		}
	}
	// However long a pull, its reports are bounded by its steps and
	// layers: a million updates of a one-layer pull send at most 100/step+2.
	th = newPullThrottle(func() time.Time { return now })
	sent := 0
	for i := range 1_000_000 {
		now = now.Add(time.Second)
		if _, ok := th.offer(runtime.PullProgress{LayersTotal: 1, BytesDone: int64(i), BytesTotal: 1_000_000}); ok {
			sent++
		}
	}
	if max := 100/pullReportStep + 2; sent > max {
		t.Errorf("%d reports for one pull, want at most %d", sent, max)
	}
}
