package apibench

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestPercentileIsNearestRank(t *testing.T) {
	t.Parallel()
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	tests := []struct {
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{ms(1, 2, 3, 4), 51, 3 * time.Millisecond},
		{ms(1, 2, 3, 4), 100, 4 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(tt.sorted, tt.p); got != tt.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
		}
	}
}

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	err := Config{Clients: 0, Rounds: 1, Duration: -1, Warmup: -1, Path: "/healthz"}.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"clients", "duration", "warm-up", "path"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %s", err, want)
		}
	}
}

// TestRunMeasuresBothModes runs the whole benchmark, briefly, on a real
// server: both modes answer, every audited request's record is appended
// and sealed (Run checks the counts exactly), none of the unaudited ones.
func TestRunMeasuresBothModes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, err := StartServer(ctx, ServerConfig{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	if srv.User.AccessKey == "" || srv.User.SecretKey == "" || srv.AuditedURL == srv.UnauditedURL {
		t.Fatalf("server %+v", srv)
	}
	cfg := Config{Clients: 4, Duration: 300 * time.Millisecond, Rounds: 2, Warmup: 100 * time.Millisecond, Path: WhoamiPath, CatchUp: time.Minute}
	profiled := map[Mode]int{}
	cfg.Profile = func(m Mode) func() { profiled[m]++; return func() {} }
	res, err := Run(ctx, srv, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 4 || res.Rounds[0].Mode != AuditOn || res.Rounds[2].Mode != AuditOff {
		t.Fatalf("rounds %+v, want on off off on", res.Rounds)
	}
	if profiled[AuditOn] != 1 || profiled[AuditOff] != 1 {
		t.Errorf("profiled rounds %v, want one per mode", profiled)
	}
	for _, s := range []Summary{res.On, res.Off} {
		if s.Rounds != 2 || s.Requests == 0 || s.P50 <= 0 || s.P50 > s.P99 || s.CPU <= 0 {
			t.Errorf("%s: %+v", s.Mode, s)
		}
	}
	if res.On.Appended == 0 || res.Off.Appended != 0 || res.Off.Sealed != 0 {
		t.Errorf("records: on %d appended, off %d appended %d sealed", res.On.Appended, res.Off.Appended, res.Off.Sealed)
	}
	var md, text bytes.Buffer
	if err := WriteMarkdown(&md, res, "## header"); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&text, res); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{md.String(), text.String()} {
		for _, want := range []string{"audit on", "audit off", "≥ 5000 req/s", "on/off"} {
			if !strings.Contains(out, want) {
				t.Errorf("report without %q:\n%s", want, out)
			}
		}
	}
}
