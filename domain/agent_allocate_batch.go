package domain

import (
	"maps"
	"time"
)

// AllocateEach decides the allocations of several sessions on this agent
// at once, each all or nothing, in order: a session whose kernels no
// longer fit (or that is refused for any reason) gets its error in errs
// and nothing allocated, and the ones after it still may. The events of
// every accepted session come back in order, ready for one append; the
// agent itself does not change (decisions never mutate the aggregate).
func (a *Agent) AllocateEach(batches [][]AllocationRequest, at time.Time) (events []Event, errs []error) {
	errs = make([]error, len(batches))
	work := a.clone()
	// What is free, computed once and reduced by each accepted session
	// (not summed again over every allocation per session).
	b := a.budget()
	for i, reqs := range batches {
		evs, err := work.allocateKernels(reqs, at, &b)
		if err != nil {
			errs[i] = err
			continue
		}
		for _, ev := range evs {
			if err := work.apply(ev); err != nil {
				// AllocateKernels only returns events its own fold accepts.
				errs[i] = &Error{Op: "agent.allocate", Kind: KindInternal, Err: err}
				return events, errs
			}
		}
		events = append(events, evs...)
	}
	return events, errs
}

// clone returns a copy whose allocations can change without touching a.
func (a *Agent) clone() *Agent {
	c := *a
	c.allocations = maps.Clone(a.allocations)
	return &c
}
