package commands

import (
	"context"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// TestRetryPolicyBackOff: the waits keep the policy's meaning — attempts
// tries in all (attempts-1 waits), the n-th wait at most backoff·2^(n-1)
// and never above maxBackoff — and stop when the context ends.
func TestRetryPolicyBackOff(t *testing.T) {
	t.Parallel()
	for _, p := range []retryPolicy{
		{attempts: 8, backoff: 2 * time.Millisecond, maxBackoff: 100 * time.Millisecond},
		{attempts: 5, backoff: 10 * time.Millisecond, maxBackoff: 15 * time.Millisecond},
		{attempts: 3, backoff: 50 * time.Millisecond, maxBackoff: 20 * time.Millisecond},
		{attempts: 1, backoff: time.Millisecond, maxBackoff: time.Millisecond},
	} {
		var longest []time.Duration
		for range 200 {
			b := p.newBackOff(context.Background())
			for n := 1; ; n++ {
				d := b.NextBackOff()
				if d == backoff.Stop {
					if n != p.attempts {
						t.Fatalf("%+v: stopped before attempt %d, want after %d attempts", p, n+0, p.attempts)
					}
					break
				}
				ceiling := min(p.backoff<<(n-1), p.maxBackoff)
				if d < 0 || d > ceiling {
					t.Fatalf("%+v: wait %d = %v, want within [0, %v]", p, n, d, ceiling)
				}
				if len(longest) < n {
					longest = append(longest, 0)
				}
				longest[n-1] = max(longest[n-1], d)
			}
		}
		// The waits are spread, not all at zero: 200 draws come near the
		// ceiling.
		for n, d := range longest {
			if ceiling := min(p.backoff<<n, p.maxBackoff); d < ceiling/2 {
				t.Errorf("%+v: the longest of 200 waits %d was %v, want near %v", p, n+1, d, ceiling)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d := (retryPolicy{attempts: 8, backoff: time.Millisecond, maxBackoff: time.Millisecond}).newBackOff(ctx).NextBackOff(); d != backoff.Stop {
		t.Fatalf("after the context ended: wait %v, want Stop", d)
	}
}
