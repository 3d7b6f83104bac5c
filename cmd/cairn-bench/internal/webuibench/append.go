package webuibench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/dsn"
	"github.com/cairnhq/cairn/infra/progress"
)

// appendBatch is how many sessions one AppendMany writes.
const appendBatch = 500

// sessionTemplate is a session.requested event that RequestSession
// appended for a session created through the API, and its metadata: the
// sessions appended for the same user are copies of it with fresh ids,
// name and time.
type sessionTemplate struct {
	event    domain.SessionRequested
	metadata eventstore.Metadata
}

// readTemplate reads the session.requested event of the session id.
func readTemplate(ctx context.Context, store eventstore.Store, id uuid.UUID) (sessionTemplate, error) {
	recs, err := store.ReadStream(ctx, domain.SessionStream(id).String(), eventstore.ReadStreamOptions{})
	if err != nil {
		return sessionTemplate{}, err
	}
	for _, r := range recs {
		if r.Type != domain.TypeSessionRequested {
			continue
		}
		ev, err := domain.DecodeEvent(r.Type, r.Version, r.Data)
		if err != nil {
			return sessionTemplate{}, err
		}
		switch e := ev.(type) {
		case domain.SessionRequested:
			return sessionTemplate{event: e, metadata: r.Metadata}, nil
		case *domain.SessionRequested:
			return sessionTemplate{event: *e, metadata: r.Metadata}, nil
		}
	}
	return sessionTemplate{}, fmt.Errorf("session %s: no %s event", id, domain.TypeSessionRequested)
}

// clone is the template's event for a new session n.
func (t sessionTemplate) clone(n int, at time.Time) (eventstore.EventData, uuid.UUID, error) {
	e := t.event
	e.SessionID = uuid.New()
	e.Name = seedName(n)
	e.At = at
	e.Kernels = append([]domain.KernelSpec(nil), e.Kernels...)
	for i := range e.Kernels {
		e.Kernels[i].KernelID = uuid.New()
	}
	data, err := domain.MarshalEvent(e)
	if err != nil {
		return eventstore.EventData{}, uuid.Nil, err
	}
	md := t.metadata
	md.RequestID = fmt.Sprintf("cairn-bench-webui-%d", n)
	return eventstore.EventData{ID: eventstore.NewEventID(), Type: e.EventType(), Version: domain.SchemaVersion, Data: data, Metadata: md}, e.SessionID, nil
}

// seedName is the name of the n-th seeded object.
func seedName(n int) string { return fmt.Sprintf("bench-%06d", n) }

// appendSessions opens the store at storeDSN (the server is stopped) and
// appends the sessions [from, to), each a new stream with a copy of the
// session.requested event RequestSession appended for the template
// session of its owner (templates: user id → session id; owner(n) names
// the user), in batches of appendBatch streams.
func appendSessions(ctx context.Context, storeDSN string, templateIDs map[string]uuid.UUID, owner func(int) string, from, to int) (err error) {
	if to <= from {
		return nil
	}
	store, err := dsn.Open(ctx, storeDSN)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	templates := map[string]sessionTemplate{}
	for user, id := range templateIDs {
		if templates[user], err = readTemplate(ctx, store, id); err != nil {
			return err
		}
	}
	bar := progress.New("append sessions", progress.Options{Unit: "sessions"})
	defer func() { bar.Finish(err) }()
	at := time.Now().UTC()
	for lo := from; lo < to; lo += appendBatch {
		hi := min(lo+appendBatch, to)
		parts := make([]eventstore.StreamAppend, 0, hi-lo)
		for n := lo; n < hi; n++ {
			t, ok := templates[owner(n)]
			if !ok {
				return fmt.Errorf("no session template for user %s", owner(n))
			}
			// Newer sessions later, as a queue fills.
			ev, id, err := t.clone(n, at.Add(time.Duration(n-from)*time.Millisecond))
			if err != nil {
				return err
			}
			parts = append(parts, eventstore.StreamAppend{Stream: domain.SessionStream(id).String(), Expected: eventstore.NoStream, Events: []eventstore.EventData{ev}})
		}
		if _, err := store.AppendMany(ctx, parts...); err != nil {
			return err
		}
		bar.Update(uint64(hi-from), uint64(to-from))
	}
	return nil
}
