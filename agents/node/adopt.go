package node

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/runtime"
)

// adopt rebuilds the agent's view at start from the containers labelled
// with its id and its own records, and starts a supervisor per kernel:
//
//   - a container whose kernel is being destroyed (or was removed) is
//     removed: the destroy was accepted before the agent stopped;
//   - a container created but not started, whose kernel.create is
//     pending, is started (the creation resumes);
//   - any other container is adopted as it is: a running one is reported
//     running again and watched, never stopped; an exited one has its exit
//     reported;
//   - a pending kernel.create without a container is carried out;
//   - a kernel being destroyed without a container is reported removed;
//   - a started kernel whose container is gone is reported removed.
//
// Containers whose kernel no allocation holds any more are only removed
// when a kernel.sync says so (see onSync). Records of kernels that are over
// and older than Config.RecordTTL are forgotten, with their logs.
func (a *Agent) adopt(ctx context.Context) error {
	rt, _ := a.runtime()
	records, err := a.ledger.all()
	if err != nil {
		return err
	}
	byKernel := make(map[uuid.UUID]record, len(records))
	for _, r := range records {
		byKernel[r.KernelID] = r
	}
	var containers []runtime.Container
	if err := a.retry(ctx, "list containers", func() (err error) {
		containers, err = rt.List(ctx, a.cfg.AgentID)
		return err
	}); err != nil {
		return err
	}

	seen := make(map[uuid.UUID]bool, len(containers))
	for _, listed := range containers {
		id, err := uuid.Parse(listed.KernelID)
		if err != nil {
			a.log.Warn("container with a kernel id that is not a UUID; left alone", "container_id", listed.ID, "kernel", listed.KernelID)
			continue
		}
		c := listed
		// List's state and exit code are coarse; Inspect's are exact.
		if err := a.retry(ctx, "inspect", func() (err error) {
			c, err = rt.Inspect(ctx, listed.ID)
			return err
		}); errors.Is(err, runtime.ErrNotFound) {
			continue // removed meanwhile
		} else if err != nil {
			return err
		}
		session, _ := uuid.Parse(c.SessionID)
		r, hasRecord := byKernel[id]
		k := newKernel(id, session, nil)
		k.found = &c
		k.containerID, k.running = c.ID, c.State == runtime.StateRunning
		k.allocRevision = labelRevision(c.Labels)
		if hasRecord && r.State == statePending && r.Create != nil {
			k.create = r.Create
		}
		if hasRecord {
			// The container keeps the host ports it was created with.
			k.apps = kernelApps{ports: r.Ports, token: r.AppToken}
			a.ports.reserve(id, r.Ports)
		}
		if hasRecord && (r.State == stateDestroying || r.State == stateRemoved) {
			k.requestDestroy()
		}
		seen[id] = true
		a.log.Info("adopting container", "kernel_id", id, "session_id", session, "container_id", c.ID, "state", c.State, "record", r.State)
		a.start(k)
	}

	for _, r := range records {
		if seen[r.KernelID] {
			continue
		}
		switch r.State {
		case statePending:
			if r.Create == nil {
				continue
			}
			a.log.Info("resuming a pending kernel.create", "kernel_id", r.KernelID, "session_id", r.SessionID)
			a.start(newKernel(r.KernelID, r.SessionID, r.Create))
		case stateDestroying:
			k := newKernel(r.KernelID, r.SessionID, r.Create)
			k.requestDestroy()
			a.ports.reserve(r.KernelID, r.Ports) // until the teardown ends
			a.start(k)
		case stateStarted:
			a.vanished(ctx, newKernel(r.KernelID, r.SessionID, r.Create))
		case stateRemoved, stateFailed:
			if time.Since(r.UpdatedAt) > a.cfg.RecordTTL {
				a.forget(r.KernelID)
			}
		}
	}
	return nil
}

// forget deletes what the agent kept of a kernel that is long over.
func (a *Agent) forget(id uuid.UUID) {
	if err := a.archive.forget(id); err != nil {
		a.log.Warn("old kernel logs not deleted", "kernel_id", id, "error", err)
	}
	if err := a.ledger.forget(id); err != nil {
		a.log.Warn("old kernel record not deleted", "kernel_id", id, "error", err)
	}
}

// labelRevision reads a container's allocation revision label.
func labelRevision(labels map[string]string) int64 {
	v, err := strconv.ParseInt(labels[LabelAllocationRevision], 10, 64)
	if err != nil || v < 0 {
		return noRevision
	}
	return v
}
