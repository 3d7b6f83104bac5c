package postgres

import (
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/pgtest"
)

// never is a poll interval no test waits for: a subscription that gets an
// event within the test's timeout was woken up.
const never = time.Hour

// TestStoresWakeEachOther: two Stores on one database (two processes, in
// production) wake each other's subscriptions through LISTEN/NOTIFY.
func TestStoresWakeEachOther(t *testing.T) {
	t.Parallel()
	url, schema := pgtest.Schema(t)
	a := openStoreAt(t, url, Options{Schema: schema, PollInterval: never})
	b := openStoreAt(t, url, Options{Schema: schema, PollInterval: never})
	ctx := t.Context()

	subA, err := a.Subscribe(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer subA.Close()
	subB, err := b.Subscribe(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer subB.Close()
	waitCaughtUp(t, subA, 10*time.Second)
	waitCaughtUp(t, subB, 10*time.Second)

	// The first append may reach b's subscription through the catch-up
	// poll its LISTEN connection makes once it listens; after that, b has
	// no wake-up source but NOTIFY (it appends nothing and never polls).
	for i, label := range []string{"from-a-1", "from-a-2", "from-a-3"} {
		if _, err := a.Append(ctx, "s-a", eventstore.Any, event(t, label)); err != nil {
			t.Fatal(err)
		}
		if got := receive(t, subB, 10*time.Second); got.Revision != int64(i) || labelOf(t, got) != label {
			t.Fatalf("b received %s, want %s", labelOf(t, got), label)
		}
		if got := receive(t, subA, 10*time.Second); labelOf(t, got) != label {
			t.Fatalf("a received %s, want %s", labelOf(t, got), label)
		}
	}
	for _, label := range []string{"from-b-1", "from-b-2"} {
		if _, err := b.Append(ctx, "s-b", eventstore.Any, event(t, label)); err != nil {
			t.Fatal(err)
		}
		if got := receive(t, subA, 10*time.Second); labelOf(t, got) != label {
			t.Fatalf("a received %s, want %s", labelOf(t, got), label)
		}
		if got := receive(t, subB, 10*time.Second); labelOf(t, got) != label {
			t.Fatalf("b received %s, want %s", labelOf(t, got), label)
		}
	}
}

// TestLocalWakeUpWithoutNotify: a Store's own appends wake its subscriptions
// without LISTEN/NOTIFY or polling.
func TestLocalWakeUpWithoutNotify(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{PollInterval: never, DisableNotify: true})
	ctx := t.Context()
	sub, err := s.Subscribe(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	waitCaughtUp(t, sub, 10*time.Second)
	for _, label := range []string{"one", "two", "three"} {
		if _, err := s.Append(ctx, "s", eventstore.Any, event(t, label)); err != nil {
			t.Fatal(err)
		}
		if got := receive(t, sub, 10*time.Second); labelOf(t, got) != label {
			t.Fatalf("received %s, want %s", labelOf(t, got), label)
		}
	}
}

func TestChannelName(t *testing.T) {
	if got := channelName("public"); got != "cairn_events_public" {
		t.Errorf("channelName(public) = %q", got)
	}
	long := strings.Repeat("x", 63)
	got := channelName(long)
	if len(got) > 63 || got == channelName(long[:62]+"y") {
		t.Errorf("channelName of a long schema = %q: too long or not distinct", got)
	}
}
