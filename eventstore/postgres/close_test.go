package postgres

import (
	"errors"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

func TestCloseEndsSubscriptionsAndRefusesCalls(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	ctx := t.Context()
	if _, err := s.Append(ctx, "s", eventstore.Any, event(t, "one")); err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, sub, 10*time.Second)

	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for open := true; open; {
		select {
		case _, open = <-sub.Messages():
		case <-timer.C:
			t.Fatal("subscription still open 10s after Close")
		}
	}
	if err := sub.Err(); !errors.Is(err, eventstore.ErrClosed) {
		t.Errorf("subscription Err = %v, want ErrClosed", err)
	}

	if _, err := s.Append(ctx, "s", eventstore.Any, event(t, "two")); !errors.Is(err, eventstore.ErrClosed) {
		t.Errorf("Append after Close = %v, want ErrClosed", err)
	}
	if _, err := s.ReadAll(ctx, 0, 10); !errors.Is(err, eventstore.ErrClosed) {
		t.Errorf("ReadAll after Close = %v, want ErrClosed", err)
	}
	if _, err := s.ReadStream(ctx, "s", eventstore.ReadStreamOptions{}); !errors.Is(err, eventstore.ErrClosed) {
		t.Errorf("ReadStream after Close = %v, want ErrClosed", err)
	}
	if _, err := s.Subscribe(ctx, 0); !errors.Is(err, eventstore.ErrClosed) {
		t.Errorf("Subscribe after Close = %v, want ErrClosed", err)
	}
	if err := s.Close(); !errors.Is(err, eventstore.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
}

// TestCloseWhileAppending: Close during concurrent appends returns once they
// have finished; each append either succeeded or reports ErrClosed.
func TestCloseWhileAppending(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	ctx := t.Context()
	const writers = 8
	done := make(chan error, writers)
	started := make(chan struct{}, writers)
	for range writers {
		go func() {
			for i := 0; ; i++ {
				_, err := s.Append(ctx, "s", eventstore.Any, event(t, "x"))
				if i == 0 {
					started <- struct{}{}
				}
				if err != nil {
					done <- err
					return
				}
			}
		}()
	}
	for range writers {
		<-started
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for range writers {
		if err := <-done; !errors.Is(err, eventstore.ErrClosed) {
			t.Errorf("append during Close = %v, want ErrClosed", err)
		}
	}
}
