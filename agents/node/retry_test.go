package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

func TestBackoffDoublesUpToRetryMax(t *testing.T) {
	t.Parallel()
	b := exponential(250*time.Millisecond, 2*time.Second)
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}
	for i, w := range want {
		if got := b.NextBackOff(); got != w {
			t.Errorf("wait %d = %s, want %s", i+1, got, w)
		}
	}
}

func TestRetry(t *testing.T) {
	t.Parallel()
	unavailable := fmt.Errorf("podman: %w", runtime.ErrUnavailable)
	kernelFault := domain.Invalid("test", "image", "no such image")
	tests := []struct {
		name      string
		results   []error // op's result on each call; nil ends it
		wantCalls int
		wantErr   error
	}{
		{"succeeds after transient failures", []error{unavailable, unavailable, nil}, 3, nil},
		{"stops at a failure that is not transient", []error{unavailable, kernelFault}, 2, domain.ErrInvalid},
		{"succeeds at once", []error{nil}, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := &Agent{cfg: Config{RetryMin: time.Millisecond, RetryMax: 4 * time.Millisecond}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			calls := 0
			err := a.retry(t.Context(), "test", func() error {
				calls++
				return tt.results[calls-1]
			})
			if calls != tt.wantCalls || !errors.Is(err, tt.wantErr) {
				t.Errorf("%d calls, err %v; want %d calls, err %v", calls, err, tt.wantCalls, tt.wantErr)
			}
		})
	}
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	// The first wait is an hour: retry can return in time only because
	// ctx ends it.
	a := &Agent{cfg: Config{RetryMin: time.Hour, RetryMax: time.Hour}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(t.Context())
	called := make(chan struct{}, 10)
	done := make(chan error, 1)
	go func() {
		done <- a.retryWhile(ctx, "remove", func(error) bool { return true }, func() error {
			called <- struct{}{}
			return errors.New("always fails")
		})
	}()
	<-called
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want the context's", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("retry still waiting after its context ended")
	}
	if n := len(called); n != 0 {
		t.Errorf("%d more calls after the first", n)
	}
}
