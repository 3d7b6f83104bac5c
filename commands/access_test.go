package commands_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
)

func accessSlot(status int) *commands.AccessSlot {
	return commands.NewAccessSlot(func(entityType, entityID string) audit.Record {
		return audit.Record{Time: time.Unix(1, 0), Action: "session.create", EntityType: entityType, EntityID: entityID,
			Outcome: audit.Success, Status: status, RequestID: "req-1"}
	})
}

// TestAccessRecordInTheSameAppend: a mutating request's access record is
// stored with its events, once, and the aggregate still loads and changes.
func TestAccessRecordInTheSameAppend(t *testing.T) {
	e := newEnv(t)
	slot := accessSlot(201)
	actx := commands.WithAccessSlot(ctx, slot)
	res, err := e.handlers.RequestSession.Handle(actx, e.md, commands.RequestSession{Spec: sessionSpec("")})
	if err != nil {
		t.Fatal(err)
	}
	if !slot.Taken() {
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
	dec, err := domain.DecodeEvent(last.Type, last.Version, last.Data)
	if err != nil {
		t.Fatal(err)
	}
	if rec := dec.(domain.AccessLogged).Record; rec.EntityType != "session" || rec.EntityID != res.SessionID.String() || rec.Status != 201 {
		t.Fatalf("access record = %+v", rec)
	}

	// The same request goes on: the record is not written twice, and the
	// session (annotation skipped, stream revision kept) still changes.
	if _, err := e.handlers.TerminateSession.Handle(actx, e.md, commands.TerminateSession{SessionID: res.SessionID, Reason: domain.ReasonUserRequested}); err != nil {
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
	slot := accessSlot(201)
	bad := sessionSpec("")
	bad.Image = ""
	_, err := e.handlers.RequestSession.Handle(commands.WithAccessSlot(ctx, slot), e.md, commands.RequestSession{Spec: bad})
	if !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("err = %v, want invalid", err)
	}
	if slot.Taken() {
		t.Fatal("a refused command took the access record")
	}
}

func types(evs []eventstore.RecordedEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}
