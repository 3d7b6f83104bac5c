package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/pgtest"
)

// openStore opens a Store on a fresh schema of the test server and closes it
// at the end of the test.
func openStore(t *testing.T, opts Options) *Store {
	t.Helper()
	url, schema := pgtest.Schema(t)
	opts.Schema = schema
	return openStoreAt(t, url, opts)
}

// openStoreAt opens a Store on url with opts (whose Schema is set) and
// closes it at the end of the test.
func openStoreAt(t *testing.T, url string, opts Options) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, url, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && err != eventstore.ErrClosed {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// connect opens a plain connection to url for the test's own SQL.
func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := conn.Close(ctx); err != nil {
			t.Logf("close connection: %v", err)
		}
	})
	return conn
}

// event builds an event whose data records its label (ASCII).
func event(t testing.TB, label string) eventstore.EventData {
	t.Helper()
	return eventstore.EventData{
		ID:       eventstore.NewEventID(),
		Type:     "test.happened",
		Version:  1,
		Data:     []byte(strconv.Quote(label)),
		Metadata: eventstore.Metadata{Actor: "tester", RequestID: label},
	}
}

func events(t testing.TB, prefix string, n int) []eventstore.EventData {
	t.Helper()
	out := make([]eventstore.EventData, n)
	for i := range out {
		out[i] = event(t, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

func labelOf(t testing.TB, ev eventstore.RecordedEvent) string {
	t.Helper()
	var l string
	if err := json.Unmarshal(ev.Data, &l); err != nil {
		t.Fatalf("decode event %d: %v", ev.Position, err)
	}
	return l
}

// streamLen is the number of events in stream.
func streamLen(t *testing.T, s *Store, stream string) int {
	t.Helper()
	evs, err := s.ReadStream(t.Context(), stream, eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatalf("ReadStream(%s): %v", stream, err)
	}
	return len(evs)
}

// receive waits for the next event of sub (skipping the caught-up marker),
// failing the test after timeout.
func receive(t *testing.T, sub eventstore.Subscription, timeout time.Duration) eventstore.RecordedEvent {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case msg, ok := <-sub.Messages():
			if !ok {
				t.Fatalf("subscription ended: %v", sub.Err())
			}
			if msg.CaughtUp {
				continue
			}
			return msg.Event
		case <-timer.C:
			t.Fatalf("no event within %s", timeout)
		}
	}
}

// waitCaughtUp consumes sub until its caught-up marker.
func waitCaughtUp(t *testing.T, sub eventstore.Subscription, timeout time.Duration) []eventstore.RecordedEvent {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var got []eventstore.RecordedEvent
	for {
		select {
		case msg, ok := <-sub.Messages():
			if !ok {
				t.Fatalf("subscription ended: %v", sub.Err())
			}
			if msg.CaughtUp {
				return got
			}
			got = append(got, msg.Event)
		case <-timer.C:
			t.Fatalf("not caught up within %s", timeout)
		}
	}
}
