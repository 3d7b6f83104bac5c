package tenancy_test

import (
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/tenancy"
)

// Answers are kept until the read model changes: a second read costs no
// query, and a change (applied and committed) is seen by the next read;
// a rebuild's swap (replaced) empties the cache too.
func TestCachedAnswers(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		rm := tenancy.New(b.DB)
		if err := projections.Setup(ctx, b.DB, rm); err != nil {
			t.Fatal(err)
		}
		r := projectiontest.Start(t, b.DB, b, rm, projections.Options{})
		var replaced uint64
		rm.CacheAnswers(r.Position, func() uint64 { return replaced }, 0)
		h := handlers(t, b)
		md := projectiontest.MD
		res, err := h.CreateDomain.Handle(ctx, md, commands.CreateDomain{Actor: superadmin, Spec: domain.DomainSpec{Name: "acme", Description: "first"}})
		if err != nil {
			t.Fatal(err)
		}
		r.WaitFor(t, res.Position)

		read := func(want string) {
			t.Helper()
			d, err := rm.GetDomain(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			if d.Description != want {
				t.Fatalf("description %q, want %q", d.Description, want)
			}
		}
		read("first")
		before := b.DB.Reads()
		read("first")
		if n := b.DB.Reads() - before; n != 0 {
			t.Errorf("a repeated read ran %d queries, want 0 (from the cache)", n)
		}
		if _, err := rm.GetDomain(ctx, "nowhere"); domain.KindOf(err) != domain.KindNotFound {
			t.Fatalf("missing domain: %v", err)
		}
		before = b.DB.Reads()
		if _, err := rm.GetDomain(ctx, "nowhere"); domain.KindOf(err) != domain.KindNotFound {
			t.Fatalf("missing domain again: %v", err)
		}
		if n := b.DB.Reads() - before; n != 1 {
			t.Errorf("a missing object read again ran %d queries, want 1 (misses are not kept)", n)
		}

		res, err = h.ModifyDomain.Handle(ctx, md, commands.ModifyDomain{Actor: superadmin, Name: "acme", Changes: domain.DomainChanges{Description: ptr("second")}})
		if err != nil {
			t.Fatal(err)
		}
		r.WaitFor(t, res.Position)
		read("second")

		// A swap of the tables by a rebuild applies no event.
		before = b.DB.Reads()
		read("second")
		replaced = r.Position() + 1
		read("second")
		if n := b.DB.Reads() - before; n != 1 {
			t.Errorf("reads around a swap ran %d queries, want 1 (after the swap only)", n)
		}
	})
}
