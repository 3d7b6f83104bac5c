package commands_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
)

// withAccess is md carrying a fresh access record, as the HTTP layer
// sends it.
func withAccess(md commands.Metadata, status int) commands.Metadata {
	md.Access = commands.NewAccess(audit.Record{Time: time.Unix(1, 0), Action: "session.create",
		Outcome: audit.Success, Status: status, RequestID: "req-1"})
	return md
}

// TestAccessRecordInTheSameAppend: a mutating request's access record is
// stored with its events, once, naming the entity of the stream it was
// appended to, and the aggregate still loads and changes.
func TestAccessRecordInTheSameAppend(t *testing.T) {
	e := newEnv(t)
	md := withAccess(e.md, 201)
	res, err := e.handlers.RequestSession.Handle(ctx, md, commands.RequestSession{Spec: sessionSpec("")})
	if err != nil {
		t.Fatal(err)
	}
	if !md.Access.Taken() {
		t.Fatal("the append did not take the access record")
	}
	stream := domain.SessionStream(res.SessionID).String()
	evs, err := e.store.ReadStream(ctx, stream, eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.Type != domain.TypeAccessLogged || last.Position != res.Position {
		t.Fatalf("last event %s at %d, want %s at the append's position %d", last.Type, last.Position, domain.TypeAccessLogged, res.Position)
	}
	if last.Metadata != md.Stored() || evs[0].Metadata != md.Stored() {
		t.Fatalf("metadata %+v and %+v, want %+v", evs[0].Metadata, last.Metadata, md.Stored())
	}
	dec, err := domain.DecodeEvent(last.Type, last.Version, last.Data)
	if err != nil {
		t.Fatal(err)
	}
	if rec := dec.(domain.AccessLogged).Record; rec.EntityType != "session" || rec.EntityID != res.SessionID.String() || rec.Status != 201 {
		t.Fatalf("access record = %+v", rec)
	}

	// The same request goes on: the record is not written twice, and the
	// session (annotation skipped, stream revision kept) still changes.
	if _, err := e.handlers.TerminateSession.Handle(ctx, md, commands.TerminateSession{SessionID: res.SessionID, Reason: domain.ReasonUserRequested}); err != nil {
		t.Fatal(err)
	}
	evs, _ = e.store.ReadStream(ctx, stream, eventstore.ReadStreamOptions{})
	n := 0
	for _, ev := range evs {
		if ev.Type == domain.TypeAccessLogged {
			n++
		}
	}
	if n != 1 || evs[len(evs)-1].Type != domain.TypeSessionCancelled {
		t.Fatalf("stream %v: want one access record, then session.cancelled", types(evs))
	}
}

// TestAccessRecordNotTakenOnRefusal: a command refused before it writes
// leaves the record to the HTTP layer.
func TestAccessRecordNotTakenOnRefusal(t *testing.T) {
	e := newEnv(t)
	md := withAccess(e.md, 201)
	bad := sessionSpec("")
	bad.Image = ""
	_, err := e.handlers.RequestSession.Handle(ctx, md, commands.RequestSession{Spec: bad})
	if !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("err = %v, want invalid", err)
	}
	if md.Access.Taken() {
		t.Fatal("a refused command took the access record")
	}
}

// TestAccessRecordGivenBackWhenTheAppendFails: an append that fails gives
// the record back (the HTTP layer then writes it); one that landed but
// whose answer was lost gives it back too, so the trail may hold the
// request twice, never not at all.
func TestAccessRecordGivenBackWhenTheAppendFails(t *testing.T) {
	for name, hook := range map[string]func(h *hookStore){
		"refused": func(h *hookStore) {
			h.beforeAppend = func(string) error { return errors.New("disk full") }
		},
		"answer lost": func(h *hookStore) {
			h.afterAppend = func(_ string, err error) error {
				if err != nil {
					return err
				}
				return context.DeadlineExceeded
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			hs := &hookStore{EventStore: e.store}
			h, err := commands.NewHandlers(hs, stepClock(), commands.Options{})
			if err != nil {
				t.Fatal(err)
			}
			hs.set(hook)
			md := withAccess(e.md, 201)
			var carried bool
			hs.set(func(h *hookStore) {
				h.onAppend = func(_ string, events []eventstore.EventData) {
					carried = carried || events[len(events)-1].Type == domain.TypeAccessLogged
				}
			})
			if _, err := h.RequestSession.Handle(ctx, md, commands.RequestSession{Spec: sessionSpec("")}); err == nil {
				t.Fatal("the command succeeded")
			}
			if !carried {
				t.Fatal("the failed append did not carry the record")
			}
			if md.Access.Taken() {
				t.Fatal("a failed append kept the access record")
			}
		})
	}
}

// TestNoAccessRecordWithoutAccess: a command sent without an Access (by a
// process manager, not a request) writes no record.
func TestNoAccessRecordWithoutAccess(t *testing.T) {
	e := newEnv(t)
	res, err := e.handlers.RequestSession.Handle(ctx, e.md, commands.RequestSession{Spec: sessionSpec("")})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := e.store.ReadStream(ctx, domain.SessionStream(res.SessionID).String(), eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == domain.TypeAccessLogged {
			t.Fatalf("a command without an access record wrote one: %v", types(evs))
		}
	}
}

func types(evs []eventstore.RecordedEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}
