package commands

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
)

// AccessSlot carries one request's access record (audit trail) to the
// first append its command makes, so that a mutating request's record is
// written in the same append as its events: both are stored, or neither.
// The HTTP layer puts a slot in the request's context (WithAccessSlot);
// when no append took it (a read, a refusal, a failure before writing),
// the HTTP layer writes the record itself (Taken reports which).
type AccessSlot struct {
	mu    sync.Mutex
	build func(entityType, entityID string) audit.Record
	taken bool
}

// NewAccessSlot returns a slot whose record build makes at append time,
// for the entity the append is about (from the stream's name, see
// entityOfStream).
func NewAccessSlot(build func(entityType, entityID string) audit.Record) *AccessSlot {
	return &AccessSlot{build: build}
}

// Taken reports whether an append carried the record.
func (s *AccessSlot) Taken() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken
}

// take returns the record for an append to stream, once.
func (s *AccessSlot) take(stream domain.Stream) (audit.Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken || s.build == nil {
		return audit.Record{}, false
	}
	s.taken = true
	return s.build(string(stream.Kind), stream.ID), true
}

// release gives the record back after a failed append, so a retry (or
// the HTTP layer) writes it. An append whose outcome is unknown releases
// it too: the trail may then hold the request twice (the second record
// saying how it failed), never not at all.
func (s *AccessSlot) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.taken = false
}

type accessSlotKey struct{}

// WithAccessSlot returns ctx carrying slot.
func WithAccessSlot(ctx context.Context, slot *AccessSlot) context.Context {
	return context.WithValue(ctx, accessSlotKey{}, slot)
}

func accessSlotFrom(ctx context.Context) *AccessSlot {
	s, _ := ctx.Value(accessSlotKey{}).(*AccessSlot)
	return s
}

// withAccessRecord appends the context's access record, if it has one not
// yet taken, to an append's events. release puts it back when the append
// fails.
func withAccessRecord(ctx context.Context, stream domain.Stream, md Metadata, data []eventstore.EventData) (_ []eventstore.EventData, release func(), err error) {
	slot := accessSlotFrom(ctx)
	if slot == nil {
		return data, func() {}, nil
	}
	rec, ok := slot.take(stream)
	if !ok {
		return data, func() {}, nil
	}
	payload, err := json.Marshal(domain.AccessLogged{Record: rec})
	if err != nil {
		slot.release()
		return nil, nil, &domain.Error{Op: "commands.encode", Kind: domain.KindInternal, Message: domain.TypeAccessLogged, Err: err}
	}
	data = append(data, eventstore.EventData{
		ID: eventstore.NewEventID(), Type: domain.TypeAccessLogged, Version: domain.SchemaVersion, Data: payload, Metadata: md,
	})
	return data, slot.release, nil
}
