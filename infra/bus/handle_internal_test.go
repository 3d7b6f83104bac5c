package bus

import (
	"errors"
	"testing"
	"time"
)

func TestNakDelayDoublesUpToMax(t *testing.T) {
	t.Parallel()
	b := nakDelay{min: 250 * time.Millisecond, max: 30 * time.Second}
	tests := []struct {
		attempt uint64
		want    time.Duration
	}{
		{0, 250 * time.Millisecond},
		{1, 250 * time.Millisecond},
		{2, 500 * time.Millisecond},
		{3, time.Second},
		{8, 30 * time.Second}, // 32 s capped
		{1 << 40, 30 * time.Second},
	}
	for _, tt := range tests {
		if got := b.WaitTime(tt.attempt); got != tt.want {
			t.Errorf("WaitTime(%d) = %s, want %s", tt.attempt, got, tt.want)
		}
	}
	huge := nakDelay{min: time.Second, max: time.Duration(1<<63 - 1)}
	if got := huge.WaitTime(200); got <= 0 {
		t.Errorf("WaitTime overflowed: %s", got)
	}
}

func TestPermanent(t *testing.T) {
	t.Parallel()
	cause := errors.New("bad data")
	err := Permanent(cause)
	if !errors.Is(err, ErrPermanent) || !errors.Is(err, cause) {
		t.Errorf("Permanent(%v) = %v: want both ErrPermanent and the cause", cause, err)
	}
	if Permanent(nil) != nil {
		t.Error("Permanent(nil) is not nil")
	}
}
