package node

import (
	"context"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus"
)

// handle handles one message of the agent's topic. It only records and
// hands work to the kernel's supervisor, so it returns quickly: a slow
// image pull never holds up the next command. A message that does not
// open (every message to an agent is sealed to its key), does not decode,
// is for another agent or of a type agents do not take is dropped
// (bus.Permanent); a record that cannot be written is retried.
func (a *Agent) handle(ctx context.Context, msg *message.Message) error {
	if err := protocol.Open(msg, a.sealKey); err != nil {
		return bus.Permanent(err)
	}
	m, err := protocol.Decode(msg)
	if err != nil {
		return bus.Permanent(err)
	}
	if m.Agent() != a.cfg.AgentID {
		return bus.Permanent(domain.Errorf("agent.handle", domain.KindInvalid, "%s for agent %q reached agent %q", m.MessageType(), m.Agent(), a.cfg.AgentID))
	}
	switch m := m.(type) {
	case protocol.KernelCreate:
		return a.onCreate(ctx, m)
	case protocol.KernelDestroy:
		return a.onDestroy(ctx, m)
	case protocol.KernelSync:
		return a.onSync(ctx, m)
	}
	return bus.Permanent(domain.Errorf("agent.handle", domain.KindInvalid, "agents do not take %s messages", m.MessageType()))
}

// onCreate accepts a kernel.create: it records it as pending (so that a
// restarted agent resumes it) and starts the kernel's supervisor. For a
// kernel the agent already looks after it only repeats the last report;
// one it has already finished (failed or removed) is not created again,
// and its final report is sent again.
func (a *Agent) onCreate(ctx context.Context, m protocol.KernelCreate) error {
	log := a.log.With("kernel_id", m.KernelID, "session_id", m.SessionID)
	if k := a.lookup(m.KernelID); k != nil {
		log.Info("kernel.create for a kernel already handled; repeating its last report")
		a.resend(ctx, k)
		return nil
	}
	r, ok, err := a.ledger.get(m.KernelID)
	if err != nil {
		return err
	}
	if ok && r.State.final() {
		log.Info("kernel.create for a kernel that is over; repeating its final report", "state", r.State)
		a.sendFinal(ctx, r)
		return nil
	}
	if _, _, err := a.ledger.advance(m.KernelID, m.SessionID, statePending, func(r *record) { r.Create = &m }); err != nil {
		return err
	}
	a.start(newKernel(m.KernelID, m.SessionID, &m))
	return nil
}

// onDestroy accepts a kernel.destroy: it records it (so that a restarted
// agent finishes it) and asks the kernel's supervisor to remove the
// container; a kernel the agent does not look after gets a supervisor
// that only does that (removing what may be left, reporting removed).
func (a *Agent) onDestroy(ctx context.Context, m protocol.KernelDestroy) error {
	a.log.Info("kernel.destroy", "kernel_id", m.KernelID, "session_id", m.SessionID, "reason", m.Reason)
	return a.destroy(ctx, m.KernelID, m.SessionID, m.Reason)
}

// sendFinal repeats the final report of a kernel that is over.
func (a *Agent) sendFinal(ctx context.Context, r record) {
	s := protocol.KernelStatus{SessionID: r.SessionID, KernelID: r.KernelID, AgentID: a.cfg.AgentID,
		ContainerID: r.ContainerID, Reason: r.Reason, Message: r.Message, ObservedAt: time.Now().UTC()}
	switch r.State {
	case stateFailed:
		s.Phase = domain.PhaseFailed
	case stateRemoved:
		s.Phase = domain.PhaseRemoved
	default:
		return // destroying: the supervisor reports removed when done
	}
	a.send(ctx, s)
}

// destroy records that the kernel must go and has its supervisor remove
// its container, starting one if the agent does not look after the
// kernel. A kernel already removed gets its final report again.
func (a *Agent) destroy(ctx context.Context, kernelID, sessionID uuid.UUID, reason string) error {
	r, _, err := a.ledger.advance(kernelID, sessionID, stateDestroying, func(r *record) {
		if reason != "" {
			r.Reason = reason
		}
	})
	if err != nil {
		return err
	}
	if r.State == stateRemoved {
		a.sendFinal(ctx, r)
		return nil
	}
	if k := a.lookup(kernelID); k != nil {
		k.requestDestroy()
		return nil
	}
	k := newKernel(kernelID, r.SessionID, nil)
	k.requestDestroy()
	if !a.start(k) {
		// Started meanwhile (cannot happen: commands come one at a time).
		if k := a.lookup(kernelID); k != nil {
			k.requestDestroy()
		}
	}
	return nil
}

// onSync applies a kernel.sync: every kernel the agent looks after that
// the manager does not list and whose allocation the list already covers
// (allocation revision at most AsOfRevision) is an orphan and is removed.
// Kernels the list names are reported again, so that the manager catches
// up on reports it may have missed.
func (a *Agent) onSync(ctx context.Context, m protocol.KernelSync) error {
	listed := make(map[uuid.UUID]bool, len(m.Kernels))
	for _, id := range m.Kernels {
		listed[id] = true
	}
	orphans := 0
	for _, k := range a.snapshot() {
		switch {
		case listed[k.id]:
			a.resend(ctx, k)
		case k.allocRevision > m.AsOfRevision:
			// Allocated after the manager read its list: not an orphan.
		case !k.destroyRequested():
			a.log.Info("removing an orphan: no allocation holds it", "kernel_id", k.id, "session_id", k.session,
				"allocation_revision", k.allocRevision, "as_of_revision", m.AsOfRevision)
			if err := a.destroy(ctx, k.id, k.session, reasonOrphaned); err != nil {
				return err
			}
			orphans++
		}
	}
	for _, id := range m.Kernels {
		if a.lookup(id) != nil {
			continue
		}
		r, ok, err := a.ledger.get(id)
		switch {
		case err != nil:
			return err
		case ok:
			a.sendFinal(ctx, r)
		default:
			a.log.Warn("the manager lists a kernel this agent has no trace of; its kernel.create may still come", "kernel_id", id)
		}
	}
	a.log.Info("kernel.sync applied", "listed", len(m.Kernels), "as_of_revision", m.AsOfRevision, "orphans", orphans)
	return nil
}
