package placement

// subject is one keypair, user, project or domain during the round: its
// limits (-1: unlimited) and occupancy per slot, which grows with every
// placement of the round.
type subject struct {
	limit   []int64
	occ     []int64
	maxConc int
	conc    int
}

// quotaState is the quota view as dense vectors. A subject missing from
// its map has no limit; keypairs are added as sessions are placed (drf
// needs every key's occupancy).
type quotaState struct {
	size     int
	keypairs map[string]*subject
	users    map[string]*subject
	projects map[string]*subject
	domains  map[string]*subject
}

func newQuotaState(t *slotTable, q *Quotas) quotaState {
	qs := quotaState{size: t.size(), keypairs: make(map[string]*subject, len(q.Keypairs))}
	for k, u := range q.Keypairs {
		s := newSubject(t, u.Usage)
		s.maxConc, s.conc = u.MaxConcurrentSessions, u.ConcurrentSessions
		qs.keypairs[k] = s
	}
	build := func(m map[string]Usage) map[string]*subject {
		out := make(map[string]*subject, len(m))
		for k, u := range m {
			out[k] = newSubject(t, u)
		}
		return out
	}
	qs.users, qs.projects, qs.domains = build(q.Users), build(q.Projects), build(q.Domains)
	return qs
}

func newSubject(t *slotTable, u Usage) *subject {
	s := &subject{limit: make([]int64, t.size()), occ: make([]int64, t.size())}
	unspecified := int64(-1)
	if u.Unspecified == UnspecifiedLimited {
		unspecified = 0
	}
	for i := range s.limit {
		s.limit[i] = unspecified
	}
	for name, v := range u.Limits {
		s.limit[t.index[name]] = max(int64(v), 0)
	}
	t.dense(u.Occupied, s.occ)
	return s
}

// charge adds a placed session to its subjects.
func (qs *quotaState) charge(r *request) {
	kp := qs.keypairs[r.s.AccessKey]
	if kp == nil {
		kp = &subject{limit: make([]int64, qs.size), occ: make([]int64, qs.size)}
		for i := range kp.limit {
			kp.limit[i] = -1
		}
		qs.keypairs[r.s.AccessKey] = kp
	}
	kp.conc++
	for _, s := range []*subject{kp, qs.users[r.s.UserID], qs.projects[r.s.Project], qs.domains[r.s.Domain]} {
		if s == nil {
			continue
		}
		for _, sa := range r.total {
			s.occ[sa.slot] += sa.amt
		}
	}
}

// dominantShare is a keypair's largest share of the group's capacity over
// the slots (drf). It is a ratio, so a float: it orders keys and is never
// an amount.
func (qs *quotaState) dominantShare(g *group, accessKey string) float64 {
	kp := qs.keypairs[accessKey]
	if kp == nil {
		return 0
	}
	var share float64
	for s, c := range g.capTotal {
		if c > 0 && kp.occ[s] > 0 {
			share = max(share, float64(kp.occ[s])/float64(c))
		}
	}
	return share
}
