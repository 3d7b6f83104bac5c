package domain

import (
	"testing"
	"time"
)

func TestSessionLimitRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ             SessionType
		policy, setting int64
		want            time.Duration
	}{
		{SessionInteractive, 600, 3600, 10 * time.Minute}, // the policy's own wins
		{SessionInteractive, 0, 3600, time.Hour},          // else the setting
		{SessionInteractive, 0, 0, 0},                     // none
		{SessionBatch, 600, 3600, 0},                      // batch sessions never idle out
	} {
		if got := IdleTimeout(tc.typ, tc.policy, tc.setting); got != tc.want {
			t.Errorf("IdleTimeout(%s, %d, %d) = %v, want %v", tc.typ, tc.policy, tc.setting, got, tc.want)
		}
	}
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	if got := IdleSince(t0, time.Time{}); !got.Equal(t0) {
		t.Errorf("never used: since %v", got)
	}
	if got := IdleSince(t0, t0.Add(time.Minute), t0.Add(-time.Hour)); !got.Equal(t0.Add(time.Minute)) {
		t.Errorf("used later: since %v", got)
	}
	if got := IdleSince(t0, t0.Add(time.Minute), t0.Add(time.Hour)); !got.Equal(t0.Add(time.Hour)) {
		t.Errorf("a later floor: since %v", got)
	}
	if ends, ok := LifetimeEnds(t0, 3600); !ok || !ends.Equal(t0.Add(time.Hour)) {
		t.Errorf("LifetimeEnds = %v %v", ends, ok)
	}
	if _, ok := LifetimeEnds(t0, 0); ok {
		t.Error("no lifetime limit gave an end")
	}
	if _, ok := LifetimeEnds(time.Time{}, 60); ok {
		t.Error("a session not scheduled gave an end")
	}
}
