package audit_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	auditrm "github.com/cairnhq/cairn/projections/audit"
)

// appendEvent appends one domain event and returns its position.
func appendEvent(t *testing.T, b *projectiontest.Backend, stream string, ev domain.Event) uint64 {
	t.Helper()
	data, err := eventstore.NewEvent(ev.EventType(), ev, eventstore.Metadata{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Store.Append(context.Background(), stream, eventstore.Any, data)
	if err != nil {
		t.Fatal(err)
	}
	return res.Position
}

// TestAuditDomains: a record concerns its actor's domain (user, or the
// access key claimed) and its entity's; a domain's records are listed
// alone, or with every other record elided so that they verify as a
// chain.
func TestAuditDomains(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		ctx := context.Background()
		uA, uO, uS := uuid.New(), uuid.New(), uuid.New() // of acme, of other, a superadmin the read model never saw created
		sA, tO, fA := uuid.New(), uuid.New(), uuid.New()
		appendEvent(t, b, domain.UserStream(uA).String(), domain.UserCreated{UserID: uA, Email: "a@example.com", Domain: "acme", Role: domain.RoleUser, At: t0})
		appendEvent(t, b, domain.UserStream(uO).String(), domain.UserCreated{UserID: uO, Email: "o@example.com", Domain: "other", Role: domain.RoleUser, At: t0})
		appendEvent(t, b, "keypair-AKACME", domain.KeypairIssued{AccessKey: "AKACME", UserID: uA, Domain: "acme", At: t0})
		appendEvent(t, b, domain.SessionStream(sA).String(), domain.SessionRequested{SessionID: sA, Domain: "acme", Project: "ml", At: t0})
		appendEvent(t, b, "token-"+tO.String(), domain.TokenIssued{TokenID: tO, UserID: uO, Domain: "other", At: t0})
		appendEvent(t, b, "vfolder-"+fA.String(), domain.VFolderCreated{FolderID: fA, Name: "data",
			Owner: domain.VFolderOwner{Kind: domain.VFolderOwnedByUser, ID: uA.String(), Domain: "acme"}, At: t0})

		rec := func(user uuid.UUID, key, entityType, entityID string) audit.Record {
			r := audit.Record{Time: t0, AccessKey: key, Action: "GET /v1/x", EntityType: entityType, EntityID: entityID, Outcome: audit.Success, Status: 200}
			if user != uuid.Nil {
				r.UserID = user.String()
			}
			return r
		}
		records := []audit.Record{
			rec(uA, "", "", ""),                 // 1: acme's user
			rec(uO, "", "session", sA.String()), // 2: other's user on acme's session
			rec(uuid.Nil, "AKACME", "", ""),     // 3: refused, claiming acme's key
			rec(uuid.Nil, "", "", ""),           // 4: nobody's
			rec(uS, "", "domain", "acme"),       // 5: a superadmin on the domain acme
			rec(uO, "", "project", "acme/ml"),   // 6: other's user on acme's project
			rec(uO, "", "auth", tO.String()),    // 7: other's user on its token
			rec(uO, "", "", ""),                 // 8: other's user
			rec(uS, "", "vfolder", fA.String()), // 9: a superadmin on acme's folder
			rec(uS, "", "user", uO.String()),    // 10: a superadmin on other's user
		}
		for i := range records {
			records[i].Time = t0.Add(time.Duration(i) * time.Second)
		}
		sealed, _, err := audit.SealAll(audit.Genesis, records)
		if err != nil {
			t.Fatal(err)
		}
		var last uint64
		for _, part := range [][]audit.Record{sealed[:5], sealed[5:]} {
			var ev domain.AuditSealed
			for _, r := range part {
				ev.Records = append(ev.Records, domain.SealedRecord{Record: r, SourcePosition: 1})
			}
			last = appendEvent(t, b, domain.AuditStream, ev)
		}
		rm := auditrm.New(b.DB, b.Store)
		r := projectiontest.Start(t, b.DB, b, rm, projections.Options{})
		r.WaitFor(t, last)

		acme := []uint64{1, 2, 3, 5, 6, 9}
		list := func(f auditrm.Filter) ([]uint64, []bool, []auditrm.Entry) {
			t.Helper()
			var seqs []uint64
			var elided []bool
			var entries []auditrm.Entry
			for {
				p, err := rm.List(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range p.Records {
					seqs, elided, entries = append(seqs, e.Record.Seq), append(elided, e.Elided), append(entries, e)
				}
				if p.Next == 0 {
					return seqs, elided, entries
				}
				f.After = p.Next
			}
		}
		for name, c := range map[string]struct {
			f    auditrm.Filter
			want []uint64
		}{
			"acme":                   {auditrm.Filter{Domain: "acme"}, acme},
			"other":                  {auditrm.Filter{Domain: "other"}, []uint64{2, 6, 7, 8, 10}},
			"acme by an actor":       {auditrm.Filter{Domain: "acme", Actor: uO.String()}, []uint64{2, 6}},
			"acme in time":           {auditrm.Filter{Domain: "acme", From: t0.Add(2 * time.Second), To: t0.Add(6 * time.Second)}, []uint64{3, 5, 6}},
			"a domain of none":       {auditrm.Filter{Domain: "nobody"}, nil},
			"acme, pages of 2":       {auditrm.Filter{Domain: "acme", Limit: 2}, acme},
			"acme after seq 5":       {auditrm.Filter{Domain: "acme", After: 5}, []uint64{6, 9}},
			"everyone's (no domain)": {auditrm.Filter{}, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		} {
			if got, _, _ := list(c.f); !slices.Equal(got, c.want) {
				t.Errorf("%s: seqs %v, want %v", name, got, c.want)
			}
		}

		// Elided: every record, acme's in full, the others by their place.
		for name, c := range map[string]struct {
			f    auditrm.Filter
			full []uint64
		}{
			"acme":             {auditrm.Filter{Domain: "acme", Elide: true}, acme},
			"acme by an actor": {auditrm.Filter{Domain: "acme", Elide: true, Actor: uO.String(), Limit: 3}, []uint64{2, 6}},
		} {
			seqs, elided, entries := list(c.f)
			if !slices.Equal(seqs, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
				t.Fatalf("%s, elided: seqs %v", name, seqs)
			}
			v := audit.NewVerifier(audit.Genesis, sealed[9].Head())
			for i, e := range entries {
				if elided[i] == slices.Contains(c.full, e.Record.Seq) {
					t.Errorf("%s: record %d elided %v", name, e.Record.Seq, elided[i])
				}
				l, err := audit.ParseLine(e.Raw)
				if err != nil {
					t.Fatalf("%s: %s: %v", name, e.Raw, err)
				}
				if (l.Elided != nil) != elided[i] {
					t.Errorf("%s: record %d's line %s", name, e.Record.Seq, e.Raw)
				}
				if err := v.AddLine(l); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			if _, err := v.Finish(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if _, err := rm.List(ctx, auditrm.Filter{Elide: true}); domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("eliding without a domain: %v", err)
		}

		// A rebuild gives the same rows.
		dump := func() []string {
			return append(projectiontest.Dump(t, b.DB, "audit_domains", 3, "domain, last_seq"), projectiontest.Dump(t, b.DB, "audit_owners", 3, "kind, id")...)
		}
		before := dump()
		if len(before) != 4+6 {
			t.Fatalf("rows %v", before)
		}
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
		p, err := projections.NewProjector(b.DB, b.Store, rm, projections.Options{Logger: projectiontest.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Rebuild(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if diff := projectiontest.DiffRows(before, dump()); diff != "" {
			t.Fatalf("rebuild differs:\n%s", diff)
		}
	})
}
