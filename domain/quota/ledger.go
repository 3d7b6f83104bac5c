package quota

import (
	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// phase is where a session stands for quotas.
type phase uint8

const (
	phasePending phase = iota // requested, not scheduled
	phaseActive               // scheduled, not ended: a concurrent session
	phaseEnded                // ended; kept while an allocation is live
)

// tracked is a session the ledger knows: pending, active, or ended with
// allocations still live.
type tracked struct {
	Session
	// owner indexes Ledger.owners: the session's subjects.
	owner int
	phase phase
	// live counts the session's allocations not yet released.
	live int
}

// allocation is one kernel's live allocation.
type allocation struct {
	session uuid.UUID
	slots   domain.Slots
}

// Ledger folds session and agent events into the sets occupancy is
// computed from: the sessions that are pending or active, and the live
// allocations by kernel. Snapshot sums the sets; Held reads running
// totals of what each subject holds (occupied slots, concurrent
// sessions), kept as the sets change, so a placement round's quota view
// costs its sessions' subjects, not every session. Apply events in log
// order; applying an event again changes nothing (allocations are keyed
// by kernel). The zero Ledger is not usable: build it with NewLedger.
type Ledger struct {
	sessions map[uuid.UUID]*tracked
	kernels  map[uuid.UUID]allocation
	// owners are the distinct (keypair, user, project, domain) subjects of
	// sessions, in the order of Scopes, interned: few owners hold many
	// sessions, and Snapshot sums by owner before it sums by subject.
	owners  [][4]string
	ownerOf map[[4]string]int
	// held are the running totals of what each subject holds, per scope
	// (in the order of Scopes) and key; a subject holding nothing has no
	// entry.
	held [4]map[string]*Occupancy
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	l := &Ledger{sessions: map[uuid.UUID]*tracked{}, kernels: map[uuid.UUID]allocation{}, ownerOf: map[[4]string]int{}}
	for i := range l.held {
		l.held[i] = map[string]*Occupancy{}
	}
	return l
}

// ApplySession folds an event of the session stream of id. Events other
// than session.requested, session.scheduled and the three ends are
// ignored.
func (l *Ledger) ApplySession(id uuid.UUID, ev domain.Event) {
	if e, ok := ev.(domain.SessionRequested); ok {
		if _, known := l.sessions[id]; !known {
			s := SessionOf(e)
			s.ID = id
			l.sessions[id] = &tracked{Session: s, owner: l.intern(s)}
		}
		return
	}
	t := l.sessions[id]
	if t == nil {
		return
	}
	switch ev.(type) {
	case domain.SessionScheduled:
		if t.phase == phasePending {
			t.phase = phaseActive
			l.hold(t, 1, nil, 1)
		}
	case domain.SessionTerminated, domain.SessionCancelled, domain.SessionErrored:
		if t.phase == phaseActive {
			l.hold(t, -1, nil, 1)
		}
		t.phase = phaseEnded
		l.forgetIfDone(id, t)
	}
}

// ApplyAgent folds an event of an agent stream: agent.allocated and
// agent.released (agent.lost is preceded by a release of everything the
// agent held, in the same append).
func (l *Ledger) ApplyAgent(ev domain.Event) {
	switch e := ev.(type) {
	case domain.AgentAllocated:
		if _, held := l.kernels[e.KernelID]; held {
			return
		}
		l.kernels[e.KernelID] = allocation{session: e.SessionID, slots: nonZero(e.Slots)}
		if t := l.sessions[e.SessionID]; t != nil {
			t.live++
			l.hold(t, 0, e.Slots, 1)
		}
	case domain.AgentReleased:
		a, held := l.kernels[e.KernelID]
		if !held {
			return
		}
		delete(l.kernels, e.KernelID)
		if t := l.sessions[a.session]; t != nil {
			t.live--
			l.hold(t, 0, a.slots, -1)
			l.forgetIfDone(a.session, t)
		}
	}
}

// hold adds concurrent sessions and sign × slots to what each subject of
// t holds, dropping the subjects that hold nothing any more.
func (l *Ledger) hold(t *tracked, concurrent int, slots domain.Slots, sign domain.Quantity) {
	keys := l.owners[t.owner]
	for i := range Scopes {
		o := l.held[i][keys[i]]
		if o == nil {
			o = &Occupancy{}
			l.held[i][keys[i]] = o
		}
		o.Concurrent += concurrent
		for k, v := range slots {
			if o.Occupied == nil {
				o.Occupied = domain.Slots{}
			}
			if o.Occupied[k] += sign * v; o.Occupied[k] == 0 {
				delete(o.Occupied, k)
			}
		}
		if o.Concurrent == 0 && len(o.Occupied) == 0 {
			delete(l.held[i], keys[i])
		}
	}
}

// Held returns what a subject holds: its occupied slots and concurrent
// sessions (Pending and PendingSlots are left zero), as Snapshot counts
// them, from running totals.
func (l *Ledger) Held(scope Scope, key string) Occupancy {
	for i, sc := range Scopes {
		if sc == scope {
			if o := l.held[i][key]; o != nil {
				return Occupancy{Occupied: nonZero(o.Occupied), Concurrent: o.Concurrent}
			}
			return Occupancy{}
		}
	}
	return Occupancy{}
}

// Holdings is a ledger's running totals as a view's source of occupancy
// (Ledger.Held).
type Holdings struct{ *Ledger }

// Of implements OccupancySource.
func (h Holdings) Of(scope Scope, key string) Occupancy { return h.Held(scope, key) }

// intern returns the index of the session's owner in l.owners.
func (l *Ledger) intern(s Session) int {
	var keys [4]string
	for i, scope := range Scopes {
		keys[i] = s.Key(scope)
	}
	i, ok := l.ownerOf[keys]
	if !ok {
		i = len(l.owners)
		l.owners = append(l.owners, keys)
		l.ownerOf[keys] = i
	}
	return i
}

func (l *Ledger) forgetIfDone(id uuid.UUID, t *tracked) {
	if t.phase == phaseEnded && t.live <= 0 {
		delete(l.sessions, id)
	}
}

// Session returns what the ledger knows of a session that is pending,
// active, or ended with allocations still live.
func (l *Ledger) Session(id uuid.UUID) (Session, bool) {
	t := l.sessions[id]
	if t == nil {
		return Session{}, false
	}
	return t.Session, true
}

// LiveAllocations is the number of allocations not yet released, whoever
// holds them.
func (l *Ledger) LiveAllocations() int { return len(l.kernels) }

// Occupancy is what one subject holds and queues.
type Occupancy struct {
	// Occupied is the sum of its sessions' live allocations.
	Occupied domain.Slots `json:"occupied"`
	// Concurrent is the number of its sessions scheduled and not ended.
	Concurrent int `json:"concurrent_sessions"`
	// Pending is the number of its sessions not scheduled yet.
	Pending int `json:"pending_sessions"`
	// PendingSlots is what its pending sessions ask in total.
	PendingSlots domain.Slots `json:"pending_slots"`
}

// IsZero reports whether the subject holds and queues nothing.
func (o Occupancy) IsZero() bool {
	return o.Concurrent == 0 && o.Pending == 0 && o.Occupied.IsZero() && o.PendingSlots.IsZero()
}

// Snapshot is the occupancy of every subject that holds or queues
// something, by scope and key (Session.Key). Amounts of zero are left out.
type Snapshot map[Scope]map[string]Occupancy

// Of returns a subject's occupancy (zero when it holds nothing).
func (s Snapshot) Of(scope Scope, key string) Occupancy { return s[scope][key] }

// Snapshot sums the ledger's sets: O(sessions + allocations). An
// allocation whose session the ledger never saw requested (none the
// commands make) is attributed to no one.
//
// Sessions are first summed per owner (keypair, user, project, domain
// together), then each owner's sums are added to its four subjects: a
// few owners hold many sessions.
func (l *Ledger) Snapshot() Snapshot {
	owners := make([]Occupancy, len(l.owners))
	for _, t := range l.sessions {
		switch t.phase {
		case phasePending:
			o := &owners[t.owner]
			o.Pending++
			o.PendingSlots = addInto(o.PendingSlots, t.Requested)
		case phaseActive:
			owners[t.owner].Concurrent++
		}
	}
	for _, a := range l.kernels {
		if t := l.sessions[a.session]; t != nil {
			o := &owners[t.owner]
			o.Occupied = addInto(o.Occupied, a.slots)
		}
	}
	snap := make(Snapshot, len(Scopes))
	for _, scope := range Scopes {
		snap[scope] = map[string]Occupancy{}
	}
	for n, o := range owners {
		if o.IsZero() {
			continue
		}
		keys := l.owners[n]
		for i, scope := range Scopes {
			sum := snap[scope][keys[i]]
			sum.Concurrent += o.Concurrent
			sum.Pending += o.Pending
			// The sums' maps are the snapshot's own (addInto makes them):
			// adding in place shares nothing.
			sum.Occupied = addInto(sum.Occupied, o.Occupied)
			sum.PendingSlots = addInto(sum.PendingSlots, o.PendingSlots)
			snap[scope][keys[i]] = sum
		}
	}
	for _, m := range snap {
		for k, o := range m {
			o.Occupied, o.PendingSlots = nonZero(o.Occupied), nonZero(o.PendingSlots)
			m[k] = o
		}
	}
	return snap
}

// addInto adds b to a, allocating a when it is nil, and returns it.
func addInto(a, b domain.Slots) domain.Slots {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = make(domain.Slots, len(b))
	}
	for k, v := range b {
		a[k] += v
	}
	return a
}
