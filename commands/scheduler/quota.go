package scheduler

import (
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/google/uuid"
)

// quotaAdmission checks a round's sessions against the quota view built
// from the state's book (the limits and the occupancy folded from the same
// log), charging each placement to the view (DOMAIN.md, "Scheduling":
// concurrency, and the keypair, user, project and domain slot limits, all
// failures reported).
type quotaAdmission struct {
	view     quota.View
	sessions map[uuid.UUID]quota.Session
}

// admission builds the quota view of the requests' subjects.
func (st *state) admission(requests []Request) *quotaAdmission {
	a := &quotaAdmission{sessions: make(map[uuid.UUID]quota.Session, len(requests))}
	list := make([]quota.Session, 0, len(requests))
	for _, r := range requests {
		if s, ok := st.quotas.Ledger.Session(r.SessionID); ok {
			a.sessions[r.SessionID] = s
			list = append(list, s)
		}
	}
	a.view = st.quotas.View(list)
	return a
}

func (a *quotaAdmission) check(r Request) []string {
	s, ok := a.sessions[r.SessionID]
	if !ok {
		return nil
	}
	return quota.Details(a.view.Check(s))
}

func (a *quotaAdmission) charge(r Request) {
	if s, ok := a.sessions[r.SessionID]; ok {
		a.view.Charge(s)
	}
}
