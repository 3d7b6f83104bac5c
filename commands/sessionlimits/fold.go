package sessionlimits

import (
	"bytes"
	"fmt"
	"time"

	"github.com/cairnhq/cairn/commands/quotas"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/google/uuid"
)

// session is what the manager knows of a session that has not ended and
// is not being torn down.
type session struct {
	id        uuid.UUID
	accessKey string
	typ       domain.SessionType
	// scheduledAt is when it was scheduled (zero while PENDING): lifetime
	// counts from then.
	scheduledAt time.Time
	// runningAt is when it first ran (zero before): idleness counts from
	// then, or from lastAccess when later.
	runningAt  time.Time
	lastAccess time.Time
	// disconnected: its agent is silent, so its user cannot reach it and
	// idleness is not counted; reconnectedAt is when it last came back
	// (idleness counts from then at the earliest).
	disconnected  bool
	reconnectedAt time.Time
}

// state is the manager's fold of the log. Only the loop goroutine
// touches it.
type state struct {
	position uint64
	sessions map[uuid.UUID]*session
	// limits are the keypairs' policies (the book's occupancy ledger is
	// folded too but not read).
	limits *quotas.Book
	// settings are the run-time settings admins set (setting.changed),
	// by key; a key absent takes its default (Config.Settings).
	settings map[domain.SettingKey]string
}

func newState() *state {
	return &state{sessions: map[uuid.UUID]*session{}, limits: quotas.NewBook(), settings: map[domain.SettingKey]string{}}
}

// setting is key's current value: the last one set, else its default.
func (st *state) setting(key domain.SettingKey, defaults domain.SettingDefaults) string {
	if v, ok := st.settings[key]; ok {
		return v
	}
	return defaults.Of(key)
}

// folded are the event types the manager decodes.
var folded = map[string]bool{
	domain.TypeSessionRequested: true, domain.TypeSessionScheduled: true, domain.TypeSessionStatusChanged: true,
	domain.TypeSessionTerminating: true, domain.TypeSessionTerminated: true, domain.TypeSessionCancelled: true,
	domain.TypeSessionErrored: true, domain.TypeAccessLogged: true, domain.TypeAccessBatchLogged: true,
	domain.TypeSessionDisconnected: true, domain.TypeSessionReconnected: true,
	domain.TypeSettingChanged: true,
}

// sessionEntity is how an access record about a session shows in its
// JSON: "session" is its entity type's value (no action or route is
// quoted as that).
var sessionEntity = []byte(`"session"`)

// apply folds one event of the log. An event of a type it folds that does
// not decode is an error.
func (st *state) apply(rec eventstore.RecordedEvent) error {
	st.position = rec.Position
	forLimits, forSessions := quotas.Wants(rec.Type), folded[rec.Type]
	if !forLimits && !forSessions {
		return nil
	}
	if rec.Type == domain.TypeAccessBatchLogged && !bytes.Contains(rec.Data, sessionEntity) {
		// A batch of reads about no session (the common case): nothing to
		// note, and no need to decode it.
		return nil
	}
	ev, err := domain.DecodeEvent(rec.Type, rec.Version, rec.Data)
	if err != nil {
		return fmt.Errorf("sessionlimits: %s@%d: %w", rec.Stream, rec.Revision, err)
	}
	if forLimits {
		if err := st.limits.Apply(rec.Stream, ev); err != nil {
			return fmt.Errorf("sessionlimits: %s@%d: %w", rec.Stream, rec.Revision, err)
		}
	}
	if !forSessions {
		return nil
	}
	if e, ok := ev.(domain.SettingChanged); ok {
		st.settings[e.Key] = e.New
		return nil
	}
	if records, ok := domain.AccessRecords(ev); ok {
		for _, r := range records {
			st.accessed(r)
		}
		return nil
	}
	s, err := domain.ParseStreamOf(domain.StreamSession, rec.Stream)
	if err != nil {
		return nil // not a session stream of ours
	}
	id, err := s.UUID()
	if err != nil {
		return nil // not a session stream of ours
	}
	st.applySession(id, ev)
	return nil
}

func (st *state) applySession(id uuid.UUID, ev domain.Event) {
	if e, ok := ev.(domain.SessionRequested); ok {
		st.sessions[id] = &session{id: id, accessKey: e.Owner.AccessKey, typ: e.Type}
		return
	}
	s := st.sessions[id]
	if s == nil {
		return
	}
	switch e := ev.(type) {
	case domain.SessionScheduled:
		s.scheduledAt = e.At
	case domain.SessionStatusChanged:
		if e.Status == domain.StatusRunning && s.runningAt.IsZero() {
			s.runningAt = e.At
		}
	case domain.SessionDisconnected:
		s.disconnected = true
	case domain.SessionReconnected:
		if e.Status != "" {
			s.disconnected, s.reconnectedAt = false, e.At
			if e.Status == domain.StatusRunning && s.runningAt.IsZero() {
				s.runningAt = e.At
			}
		}
	case domain.SessionTerminating, domain.SessionTerminated, domain.SessionCancelled, domain.SessionErrored:
		// Being torn down or ended: no limit applies any more.
		delete(st.sessions, id)
	}
}

// accessed notes a successful API request about a session.
func (st *state) accessed(r audit.Record) {
	if r.EntityType != "session" || r.Outcome != audit.Success {
		return
	}
	id, err := uuid.Parse(r.EntityID)
	if err != nil {
		return
	}
	if s := st.sessions[id]; s != nil && r.Time.After(s.lastAccess) {
		s.lastAccess = r.Time.UTC()
	}
}
