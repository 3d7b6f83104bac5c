package domain

import "time"

// The rules of a session's idle and lifetime limits, shared by the
// process manager that enforces them and the read side that shows them.

// IdleTimeout is an interactive session's idle limit: its keypair
// policy's idle_timeout (seconds), else the run-time setting
// session.default_idle_timeout (seconds); 0 means none. Other session
// types never idle out.
func IdleTimeout(typ SessionType, policySeconds, defaultSeconds int64) time.Duration {
	if typ != SessionInteractive {
		return 0
	}
	if policySeconds > 0 {
		return time.Duration(policySeconds) * time.Second
	}
	return time.Duration(max(defaultSeconds, 0)) * time.Second
}

// IdleSince is when a running session's idleness counts from: the latest
// of when it started running, its last use (the latest successful access
// record about it), and any later floor (its return from DISCONNECTED,
// the start of the manager counting).
func IdleSince(runningAt, lastUse time.Time, floors ...time.Time) time.Time {
	out := runningAt
	for _, t := range append([]time.Time{lastUse}, floors...) {
		if t.After(out) {
			out = t
		}
	}
	return out
}

// IdleEnds is when a session idle since since ends for its idle limit.
func IdleEnds(since time.Time, timeout time.Duration) time.Time { return since.Add(timeout) }

// LifetimeEnds is when a session scheduled at scheduledAt ends for its
// max_session_lifetime (seconds); false when it has none.
func LifetimeEnds(scheduledAt time.Time, lifetimeSeconds int64) (time.Time, bool) {
	if lifetimeSeconds <= 0 || scheduledAt.IsZero() {
		return time.Time{}, false
	}
	return scheduledAt.Add(time.Duration(lifetimeSeconds) * time.Second), true
}
