package maintenance_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/maintenance"
)

func TestRedactDSN(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"sqlite:///var/lib/cairn/cairn.db?synchronous=NORMAL", "sqlite:///var/lib/cairn/cairn.db?synchronous=NORMAL"},
		{"postgres://cairn:s3cret@db:5432/cairn?sslmode=disable", "postgres://db:5432/cairn?sslmode=disable"},
		{"postgres://cairn@db/cairn?password=s3cret&schema=cairn", "postgres://db/cairn?schema=cairn"},
		{"postgres://db/cairn?sslpassword=s3cret&PassWord=s3cret&sslkey=/k", "postgres://db/cairn"},
		{"nats://agent:s3cret@bus:4222", "nats://bus:4222"},
		{"host=db password=s3cret", "(hidden: not a URL)"},
	} {
		if got := maintenance.RedactDSN(c.in); got != c.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Track records while the work runs that this process leads, and the
// epoch of the fence its context carries.
func TestLeasesTrackEpoch(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC)
	l := maintenance.NewLeases("test", func() time.Time { return at })
	inside := make(chan []maintenance.Lease, 1)
	run := l.Track("scheduler", func(context.Context) error {
		inside <- l.List()
		return nil
	})
	if got := l.List(); len(got) != 1 || got[0].HeldHere || got[0].Epoch != 0 {
		t.Fatalf("before: %+v", got)
	}
	if err := run(eventstore.WithFence(t.Context(), eventstore.Fence{Lease: "scheduler", Epoch: 4})); err != nil {
		t.Fatal(err)
	}
	got := <-inside
	if len(got) != 1 || !got[0].HeldHere || got[0].Epoch != 4 || got[0].Since == nil || !got[0].Since.Equal(at) {
		t.Fatalf("while leading: %+v", got)
	}
	if got := l.List(); got[0].HeldHere || got[0].Epoch != 0 || got[0].Since != nil {
		t.Fatalf("after: %+v", got)
	}
}
