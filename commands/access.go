package commands

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
)

// Access is one request's access record (audit trail) on its way to the
// first append its commands make, so that a mutating request's record is
// written in the same append as its events: both are stored, or neither.
//
// The HTTP layer makes one per request (NewAccess) and passes it in the
// commands' Metadata (Metadata.Access); the Audited decorator, which
// NewHandlers puts around every handler, hands it to the command's
// appends, and the first append takes it, naming the entity from its
// typed stream. When no append took it (a read, a refusal, a failure
// before writing), the HTTP layer writes the record itself (Taken reports
// which). An append that failed, or whose outcome is unknown, gives the
// record back: the trail may then hold the request twice (the second
// record saying how it failed), never not at all.
type Access struct {
	mu     sync.Mutex
	record audit.Record
	taken  bool
}

// NewAccess returns the access of a request whose record is rec (who,
// what, when, the status the request answers when its command succeeds);
// the append that takes it fills in the entity.
func NewAccess(rec audit.Record) *Access { return &Access{record: rec} }

// Taken reports whether an append carried the record.
func (a *Access) Taken() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.taken
}

// take returns the record for an append to stream, once.
func (a *Access) take(stream domain.Stream) (audit.Record, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.taken {
		return audit.Record{}, false
	}
	a.taken = true
	rec := a.record
	rec.EntityType, rec.EntityID = string(stream.Kind), stream.ID
	return rec, true
}

// release gives the record back after a failed append, so a retry (or
// the HTTP layer) writes it.
func (a *Access) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.taken = false
}

// Audited decorates h so that the request's access record in
// Metadata.Access rides with the first append h makes (see Access).
// NewHandlers decorates every handler; a handler built without it never
// writes an access record.
func Audited[C Command, R any](h Handler[C, R]) Handler[C, R] { return audited[C, R]{h} }

type audited[C Command, R any] struct{ next Handler[C, R] }

func (a audited[C, R]) Handle(ctx context.Context, md Metadata, cmd C) (R, error) {
	md.audit = md.Access
	return a.next.Handle(ctx, md, cmd)
}

// withAccessRecord appends the request's access record, if the command
// carries one not yet taken, to an append's events. release puts it back
// when the append fails.
func withAccessRecord(stream domain.Stream, md Metadata, data []eventstore.EventData) (_ []eventstore.EventData, release func(), err error) {
	if md.audit == nil {
		return data, func() {}, nil
	}
	rec, ok := md.audit.take(stream)
	if !ok {
		return data, func() {}, nil
	}
	payload, err := json.Marshal(domain.AccessLogged{Record: rec})
	if err != nil {
		md.audit.release()
		return nil, nil, &domain.Error{Op: "commands.encode", Kind: domain.KindInternal, Message: domain.TypeAccessLogged, Err: err}
	}
	data = append(data, eventstore.EventData{
		ID: eventstore.NewEventID(), Type: domain.TypeAccessLogged, Version: domain.SchemaVersion, Data: payload, Metadata: md.Stored(),
	})
	return data, md.audit.release, nil
}
