package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands/auditseq"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	auditrm "github.com/cairnhq/cairn/projections/audit"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)

// seal logs n access records (alternating users, actions and outcomes,
// one second apart), seals them with the real sequencer and returns the
// position of the last sealed record.
func seal(t *testing.T, b *projectiontest.Backend, n int) uint64 {
	t.Helper()
	return sealUpTo(t, b, n, n)
}

// sealUpTo is seal for n more records after total-n sealed already.
func sealUpTo(t *testing.T, b *projectiontest.Backend, n, total int) uint64 {
	t.Helper()
	ctx := context.Background()
	var batch []audit.Record
	for i := range n {
		rec := audit.Record{Time: t0.Add(time.Duration(i) * time.Second), UserID: fmt.Sprintf("user-%d", i%2), AccessKey: fmt.Sprintf("AK%d", i%2),
			Action: []string{"GET /v1/sessions", "POST /v1/sessions"}[i%2], EntityType: "session", EntityID: fmt.Sprint(i),
			Outcome: []audit.Outcome{audit.Success, audit.Failure, audit.Denied}[i%3], Status: 200, RequestID: fmt.Sprint("r", i)}
		if i < n/2 {
			// A mutating request's record, alone.
			data, _ := json.Marshal(domain.AccessLogged{Record: rec})
			if _, err := b.Store.Append(ctx, domain.AccessLogStream, eventstore.Any,
				eventstore.EventData{ID: eventstore.NewEventID(), Type: domain.TypeAccessLogged, Data: data}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		batch = append(batch, rec)
	}
	// The others in one group-committed batch.
	data, _ := json.Marshal(domain.AccessBatchLogged{Records: batch})
	if _, err := b.Store.Append(ctx, domain.AccessLogStream, eventstore.Any,
		eventstore.EventData{ID: eventstore.NewEventID(), Type: domain.TypeAccessBatchLogged, Data: data}); err != nil {
		t.Fatal(err)
	}
	done := make(chan audit.Head, 64)
	seq, err := auditseq.New(auditseq.Config{Logger: projectiontest.Discard, OnSealed: func(h audit.Head) { done <- h }}, b.Store)
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- seq.Run(sctx) }()
	timeout := time.After(projectiontest.Timeout)
	for h := (audit.Head{}); h.Seq < uint64(total); {
		select {
		case h = <-done:
		case <-timeout:
			t.Fatalf("sealed up to %d of %d", h.Seq, n)
		}
	}
	cancel()
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	last, err := b.Store.ReadStream(ctx, domain.AuditStream, eventstore.ReadStreamOptions{Direction: eventstore.Backward, From: eventstore.FromEnd, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	return last[0].Position
}

func seqs(p auditrm.Page) []uint64 {
	var out []uint64
	for _, e := range p.Records {
		out = append(out, e.Record.Seq)
	}
	return out
}

func TestAuditReadModel(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		ctx := context.Background()
		const n = 12
		pos := seal(t, b, n)
		rm := auditrm.New(b.DB, b.Store)
		r := projectiontest.Start(t, b.DB, b, rm, projections.Options{})
		r.WaitFor(t, pos)

		all, err := rm.List(ctx, auditrm.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if got := seqs(all); len(got) != n || got[0] != 1 || got[n-1] != n || all.Next != 0 {
			t.Fatalf("all records: %v (next %d)", got, all.Next)
		}
		var recs []audit.Record
		for _, e := range all.Records {
			var stored domain.SealedRecord
			if err := json.Unmarshal(e.Raw, &stored); err != nil {
				t.Fatal(err)
			}
			recs = append(recs, stored.Record)
		}
		if _, err := audit.Verify(slices.Values(recs)); err != nil {
			t.Fatalf("the exported records do not verify: %v", err)
		}

		for name, c := range map[string]struct {
			f    auditrm.Filter
			want []uint64
		}{
			"actor by user":    {auditrm.Filter{Actor: "user-1"}, []uint64{2, 4, 6, 8, 10, 12}},
			"actor by key":     {auditrm.Filter{Actor: "AK0", Action: "GET /v1/sessions"}, []uint64{1, 3, 5, 7, 9, 11}},
			"outcome":          {auditrm.Filter{Outcome: audit.Denied}, []uint64{3, 6, 9, 12}},
			"entity":           {auditrm.Filter{EntityType: "session", EntityID: "4"}, []uint64{5}},
			"time window":      {auditrm.Filter{From: t0.Add(2 * time.Second), To: t0.Add(5 * time.Second)}, []uint64{3, 4, 5}},
			"after and filter": {auditrm.Filter{Actor: "user-0", After: 7}, []uint64{9, 11}},
		} {
			p, err := rm.List(ctx, c.f)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := seqs(p); !slices.Equal(got, c.want) {
				t.Errorf("%s: seqs %v, want %v", name, got, c.want)
			}
		}

		// Pages.
		var paged []uint64
		f := auditrm.Filter{Limit: 5}
		for {
			p, err := rm.List(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, seqs(p)...)
			if p.Next == 0 {
				break
			}
			f.After = p.Next
		}
		if !slices.Equal(paged, seqs(all)) {
			t.Fatalf("paged %v, want %v", paged, seqs(all))
		}
		if _, err := rm.List(ctx, auditrm.Filter{Outcome: "maybe"}); err == nil {
			t.Error("an unknown outcome was accepted")
		}

		// A rebuild gives the same rows.
		before := append(projectiontest.Dump(t, b.DB, "audit_runs", 5, "last_seq"), projectiontest.Dump(t, b.DB, "audit_keys", 3, "field, value, last_seq")...)
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
		after := append(projectiontest.Dump(t, b.DB, "audit_runs", 5, "last_seq"), projectiontest.Dump(t, b.DB, "audit_keys", 3, "field, value, last_seq")...)
		if diff := projectiontest.DiffRows(before, after); diff != "" {
			t.Fatalf("rebuild differs:\n%s", diff)
		}
	})
}

// TestAuditReadModelManyRuns: pages cross runs and the candidate runs of
// several queries, with every filter kind driving.
func TestAuditReadModelManyRuns(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		ctx := context.Background()
		const n = 80 // 40 runs of one record, one run of 40
		pos := seal(t, b, n)
		rm := auditrm.New(b.DB, b.Store)
		projectiontest.Start(t, b.DB, b, rm, projections.Options{}).WaitFor(t, pos)
		every := func(from, step int) []uint64 {
			var out []uint64
			for s := from; s <= n; s += step {
				out = append(out, uint64(s))
			}
			return out
		}
		for name, c := range map[string]struct {
			f    auditrm.Filter
			want []uint64
		}{
			"everything":     {auditrm.Filter{}, every(1, 1)},
			"outcome":        {auditrm.Filter{Outcome: audit.Denied}, every(3, 3)},
			"actor":          {auditrm.Filter{Actor: "AK1"}, every(2, 2)},
			"action":         {auditrm.Filter{Action: "GET /v1/sessions"}, every(1, 2)},
			"entity type":    {auditrm.Filter{EntityType: "session", Outcome: audit.Success}, every(1, 3)},
			"entity id":      {auditrm.Filter{EntityID: "77"}, []uint64{78}},
			"time and actor": {auditrm.Filter{Actor: "user-0", From: t0.Add(30 * time.Second), To: t0.Add(45 * time.Second)}, every(31, 2)[:8]}, // seqs 31..45: times t0+30s..t0+44s
			"nothing":        {auditrm.Filter{Actor: "nobody"}, nil},
		} {
			for _, limit := range []int{1, 4, 7, auditrm.MaxLimit} {
				var got []uint64
				f := c.f
				f.Limit = limit
				for {
					p, err := rm.List(ctx, f)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					got = append(got, seqs(p)...)
					if p.Next == 0 {
						break
					}
					f.After = p.Next
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("%s, pages of %d: seqs %v, want %v", name, limit, got, c.want)
				}
			}
		}
	})
}

// TestAuditReadModelAfterPrune: runs archived and pruned from the store
// (tombstones) leave the answers at once, without waiting for the
// projector, and a rebuild has no row for them.
func TestAuditReadModelAfterPrune(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		ctx := context.Background()
		const n = 12 // three runs of 4 records
		sealUpTo(t, b, 4, 4)
		sealUpTo(t, b, 4, 8)
		pos := sealUpTo(t, b, 4, 12)
		rm := auditrm.New(b.DB, b.Store)
		r := projectiontest.Start(t, b.DB, b, rm, projections.Options{})
		r.WaitFor(t, pos)
		all, err := rm.List(ctx, auditrm.Filter{})
		if err != nil || len(all.Records) != n {
			t.Fatalf("before the prune: %v, %v", seqs(all), err)
		}
		pruner, ok := b.Store.(eventstore.Pruner)
		if !ok {
			t.Fatalf("%T is not an eventstore.Pruner", b.Store)
		}
		// The sequencer may seal the first four records in one run or in
		// several (it seals what it has read): prune the events up to the
		// one that ends at seq 4, and count the live ones.
		events, err := b.Store.ReadStream(ctx, domain.AuditStream, eventstore.ReadStreamOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before, liveRuns := int64(-1), 0
		for _, ev := range events {
			var sealed domain.AuditSealed
			if err := json.Unmarshal(ev.Data, &sealed); err != nil {
				t.Fatal(err)
			}
			if last := sealed.Records[len(sealed.Records)-1].Seq; last <= 4 {
				before = ev.Revision + 1
			} else {
				liveRuns++
			}
		}
		if before < 1 {
			t.Fatalf("no run of the audit stream ends at seq 4 or before")
		}
		tomb, _ := json.Marshal(domain.AuditPruned{Through: all.Records[3].Record.Head(), At: t0})
		if _, err := pruner.Prune(ctx, domain.AuditStream, before, eventstore.Tombstone{Type: domain.TypeAuditPruned, Data: tomb}); err != nil {
			t.Fatal(err)
		}
		want := []uint64{5, 6, 7, 8, 9, 10, 11, 12}
		for _, f := range []auditrm.Filter{{}, {Limit: 3}, {Actor: "user-0"}} {
			var got []uint64
			for {
				p, err := rm.List(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, seqs(p)...)
				if p.Next == 0 {
					break
				}
				f.After = p.Next
			}
			if f.Actor == "" && !slices.Equal(got, want) || f.Actor != "" && !slices.Equal(got, []uint64{5, 7, 9, 11}) {
				t.Errorf("%+v after the prune: seqs %v", f, got)
			}
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
		if rows := projectiontest.Dump(t, b.DB, "audit_runs", 5, "last_seq"); len(rows) != liveRuns {
			t.Fatalf("after a rebuild: %d runs, want the %d live ones:\n%v", len(rows), liveRuns, rows)
		}
	})
}
