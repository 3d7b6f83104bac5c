package readapi

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// A subscriber that reads nothing is dropped once its buffer is full; the
// feed never waits for it, and one that keeps reading gets every change.
func TestFeedDropsASlowSubscriberWithoutBlockingOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed(nil, nil, 2, slog.New(slog.DiscardHandler), nil)
		close(f.ready) // as run does once it has read the head
		all := func(change) bool { return true }
		slow, _, err := f.subscribe(context.Background(), all)
		if err != nil {
			t.Fatal(err)
		}
		fast, _, err := f.subscribe(context.Background(), all)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case c := <-fast.ch:
					got = append(got, c.Position)
				case <-fast.dropped:
					return
				}
			}
		}()
		const n = 10
		for p := uint64(1); p <= n; p++ {
			f.publish(change{Kind: KindSession, Position: p}, true, p)
			synctest.Wait() // the fast reader has taken it
		}
		select {
		case <-slow.dropped:
		default:
			t.Fatal("the subscriber that reads nothing was not dropped")
		}
		if len(slow.ch) != 2 {
			t.Errorf("the dropped subscriber holds %d changes, want its buffer (2)", len(slow.ch))
		}
		if f.subscribers() != 1 || f.position() != n {
			t.Errorf("feed: %d subscribers at %d, want 1 at %d", f.subscribers(), f.position(), n)
		}
		f.stop()
		<-done
		if len(got) != n {
			t.Errorf("the reading subscriber got %v, want all %d", got, n)
		}
		if _, _, err := f.subscribe(context.Background(), all); err == nil {
			t.Error("a stopped feed took a subscriber")
		}
	})
}

// Who receives a change: the rules of the GET routes.
func TestSeesChange(t *testing.T) {
	t.Parallel()
	const aliceID, bobID = "00000000-0000-0000-0000-00000000000a", "00000000-0000-0000-0000-00000000000b"
	who := func(role domain.Role, dom, user string, projects ...string) Caller {
		return Caller{Principal: httpapi.Principal{UserID: user, Role: string(role), Domain: dom, Projects: projects, AccessKey: "AK" + user[len(user)-1:]}}
	}
	super := who(domain.RoleSuperadmin, "default", bobID)
	admin := who(domain.RoleAdmin, "default", bobID)
	monitor := who(domain.RoleMonitor, "default", bobID)
	alice := who(domain.RoleUser, "default", aliceID, "ml")
	bob := who(domain.RoleUser, "default", bobID)
	otherAdmin := who(domain.RoleAdmin, "other", bobID)
	otherMember := who(domain.RoleUser, "other", bobID, "ml")
	for _, c := range []struct {
		name string
		a    audience
		sees []Caller
		not  []Caller
	}{
		{"alice's session", audience{readers: "default", users: []string{aliceID}},
			[]Caller{super, admin, monitor, alice}, []Caller{bob, otherAdmin, otherMember}},
		{"a project folder of default/ml", audience{readers: "default", projects: []string{"default/ml"}},
			[]Caller{super, admin, alice}, []Caller{bob, otherAdmin, otherMember}},
		{"the domain default", audience{members: "default"},
			[]Caller{super, admin, alice, bob}, []Caller{otherAdmin, otherMember}},
		{"an agent", audience{everyone: true},
			[]Caller{super, alice, otherMember}, nil},
		{"a resource group granted to other", audience{grantees: []domain.Grantee{{Kind: domain.GranteeDomain, Name: "other"}}},
			[]Caller{super, otherAdmin, otherMember}, []Caller{admin, alice}},
		{"what the read models could not tell", audience{},
			[]Caller{super}, []Caller{admin, monitor, alice}},
	} {
		for _, u := range c.sees {
			if !u.seesChange(change{audience: c.a}) {
				t.Errorf("%s: %s of %s does not see it", c.name, u.Role, u.Domain)
			}
		}
		for _, u := range c.not {
			if u.seesChange(change{audience: c.a}) {
				t.Errorf("%s: %s %s of %s sees it", c.name, u.Role, u.UserID, u.Domain)
			}
		}
	}
}

type at uint64

func (at) WaitFor(context.Context, uint64) error { return nil }
func (p at) Position() uint64                    { return uint64(p) }

type blind struct{}

func (blind) WaitFor(context.Context, uint64) error { return nil }

// The feed starts where the read models are: the least position of
// WaitAll's projectors; a waiter that cannot tell makes it read the head.
func TestReachedPosition(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		w    Waiter
		pos  uint64
		ok   bool
	}{
		{"a projector", at(7), 7, true},
		{"the least of all", WaitAll(at(9), at(4), at(6)), 4, true},
		{"one cannot tell", WaitAll(at(9), blind{}), 0, false},
		{"none", WaitAll(), 0, false},
		{"blind", blind{}, 0, false},
	} {
		if pos, ok := reachedPosition(c.w); pos != c.pos || ok != c.ok {
			t.Errorf("%s: %d %v, want %d %v", c.name, pos, ok, c.pos, c.ok)
		}
	}
}

// flakyWaiter refuses the first `refusals` waits, as a projector held by
// an online rebuild's swap does, then answers.
type flakyWaiter struct{ refusals, calls int }

func (w *flakyWaiter) WaitFor(context.Context, uint64) error {
	w.calls++
	if w.calls <= w.refusals {
		return &domain.Error{Op: "projections.wait", Kind: domain.KindUnavailable, Message: "projector stopped"}
	}
	return nil
}

// A read model that cannot answer for a moment does not end the feed: it
// is waited for again until it answers; only the context ends the wait.
func TestFeedWaitsOutAHeldReadModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &flakyWaiter{refusals: 5}
		f := newFeed(nil, w, 2, slog.New(slog.DiscardHandler), nil)
		if err := f.waitFor(context.Background(), 7); err != nil {
			t.Fatalf("waitFor: %v", err)
		}
		if w.calls != 6 {
			t.Fatalf("%d waits, want 6 (5 refused, then one answered)", w.calls)
		}
		ctx, cancel := context.WithCancel(context.Background())
		w = &flakyWaiter{refusals: 1 << 30}
		f = newFeed(nil, w, 2, slog.New(slog.DiscardHandler), nil)
		errc := make(chan error, 1)
		go func() { errc <- f.waitFor(ctx, 7) }()
		synctest.Wait()
		cancel()
		if err := <-errc; err == nil {
			t.Fatal("a wait that never succeeds must end with its context")
		}
	})
}
