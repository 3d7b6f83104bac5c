package main

import (
	"strings"
	"testing"
	"time"
)

func TestBenchSeriesPercentiles(t *testing.T) {
	t.Parallel()
	s := &benchSeries{}
	for i := 20; i >= 1; i-- { // 20 ms down to 1 ms, unsorted on purpose
		s.samples = append(s.samples, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 10 * time.Millisecond}, {99, 20 * time.Millisecond}, {100, 20 * time.Millisecond}, {1, time.Millisecond}} {
		if got := s.percentile(tc.p); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := s.mean(); got != 10500*time.Microsecond {
		t.Errorf("mean = %v, want 10.5ms", got)
	}
	if got := (&benchSeries{}).percentile(50); got != 0 {
		t.Errorf("p50 of nothing = %v", got)
	}
}

func TestBenchSessionsConfigValidate(t *testing.T) {
	t.Parallel()
	ok := benchSessionsConfig{Sessions: 20, Image: "localhost/cairn/base:latest", PollEvery: time.Millisecond, Timeout: time.Minute}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config refused: %v", err)
	}
	bad := ok
	bad.Sessions, bad.API, bad.Image = 0, "http://x", ""
	err := bad.Validate()
	for _, want := range []string{"--sessions", "--token", "--image"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %s", err, want)
		}
	}
}
