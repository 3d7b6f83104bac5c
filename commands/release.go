package commands

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// release asks an agent to give back what one kernel holds.
type release struct {
	agentID  string
	kernelID uuid.UUID
	reason   string
}

// releaser releases allocations on agents: what a handler that ends
// kernels or sessions needs.
type releaser struct{ agents repository[*domain.Agent] }

// releaseAll releases allocations on their agents, one append per agent,
// in agent order. It is idempotent: a kernel holding nothing, or an agent
// that never registered, is skipped. Every agent is tried; errors are
// joined. It returns the position of the last append.
func (d releaser) releaseAll(ctx context.Context, md Metadata, releases []release, at time.Time) (uint64, error) {
	byAgent := map[string][]release{}
	for _, r := range releases {
		byAgent[r.agentID] = append(byAgent[r.agentID], r)
	}
	agents := make([]string, 0, len(byAgent))
	for id := range byAgent {
		agents = append(agents, id)
	}
	sort.Strings(agents)

	var (
		last uint64
		errs []error
	)
	for _, id := range agents {
		_, pos, err := d.agents.update(ctx, domain.AgentStream(id), md, func(a *domain.Agent) ([]domain.Event, error) {
			if !a.Exists() {
				return nil, nil
			}
			var events []domain.Event
			for _, r := range byAgent[id] {
				evs, err := a.Release(r.kernelID, r.reason, at)
				if err != nil {
					return nil, err
				}
				events = append(events, evs...)
			}
			return events, nil
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		last = max(last, pos)
	}
	return last, errors.Join(errs...)
}

// releaseEnded releases the allocations of the session's kernels that have
// ended (all of them once the session has ended), each with its kernel's
// status reason.
func (d releaser) releaseEnded(ctx context.Context, md Metadata, s *domain.Session, at time.Time) (uint64, error) {
	var releases []release
	for _, k := range s.KernelsToRelease() {
		reason := k.StatusReason()
		if reason == "" {
			reason = s.StatusReason()
		}
		releases = append(releases, release{agentID: k.AgentID(), kernelID: k.ID(), reason: reason})
	}
	if len(releases) == 0 {
		return 0, nil
	}
	return d.releaseAll(ctx, md, releases, at)
}
