package forwarder

import (
	"context"
	"errors"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/images"
)

const op = "forwarder.translate"

// outgoing is one message to publish.
type outgoing struct {
	topic string
	msg   *message.Message
}

// translate returns the messages one event means for the agents (none for
// most events). A KindUnavailable error means the store could not be read
// (retry); any other error, that the event will never translate (skip).
func (f *Forwarder) translate(ctx context.Context, rec eventstore.RecordedEvent) ([]outgoing, error) {
	switch rec.Type {
	case domain.TypeAgentRegistered:
		if agentID, err := agentOf(rec); err == nil {
			delete(f.agents, agentID) // it may have a new key
		}
		return nil, nil
	case domain.TypeAgentAllocated:
		return f.kernelCreate(ctx, rec)
	case domain.TypeAgentReleased:
		return f.releasedDestroy(ctx, rec)
	case domain.TypeSessionTerminating:
		e, err := decode[domain.SessionTerminating](rec)
		if err != nil {
			return nil, err
		}
		return f.sessionDestroy(ctx, rec, e.Reason, e.At)
	case domain.TypeSessionErrored:
		e, err := decode[domain.SessionErrored](rec)
		if err != nil {
			return nil, err
		}
		return f.sessionDestroy(ctx, rec, e.Reason, e.At)
	}
	return nil, nil
}

// kernelCreate joins the allocation with its session's request.
func (f *Forwarder) kernelCreate(ctx context.Context, rec eventstore.RecordedEvent) ([]outgoing, error) {
	agentID, err := agentOf(rec)
	if err != nil {
		return nil, err
	}
	alloc, err := decode[domain.AgentAllocated](rec)
	if err != nil {
		return nil, err
	}
	first, err := f.readSession(ctx, alloc.SessionID, 1)
	if err != nil {
		return nil, err
	}
	req, ok := first[0].Event.(domain.SessionRequested)
	if !ok {
		return nil, domain.Errorf(op, domain.KindInternal, "session %s does not begin with %s", alloc.SessionID, domain.TypeSessionRequested)
	}
	m, err := protocol.NewKernelCreate(agentID, alloc, rec.Revision, req)
	if err != nil {
		return nil, err
	}
	if m.Mounts, err = f.mounts(req.Mounts); err != nil {
		return nil, err
	}
	imagePorts, err := f.imageServicePorts(ctx, agentID, req.Image)
	if err != nil {
		return nil, err
	}
	m.ServicePorts = domain.SessionServicePorts(imagePorts, req.PreopenPorts)
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return f.encode(ctx, agentID, rec.ID, m)
}

// mounts resolves a session's virtual folder mounts to bind mounts of
// their directories: read-only for ro, read-write for rw and wd.
func (f *Forwarder) mounts(vms []domain.VFolderMount) ([]protocol.Mount, error) {
	if len(vms) == 0 {
		return nil, nil
	}
	if f.cfg.MountSources == nil {
		return nil, domain.Errorf(op, domain.KindInternal, "the session mounts virtual folders, and the forwarder has no mount sources")
	}
	out := make([]protocol.Mount, 0, len(vms))
	for _, vm := range vms {
		id, err := uuid.Parse(vm.FolderID)
		if err != nil {
			return nil, domain.Errorf(op, domain.KindInternal, "mount of folder %q: %v", vm.FolderID, err)
		}
		src, err := f.cfg.MountSources.MountSource(vm.Host, id)
		if err != nil {
			// A folder deleted since the request will not come back; a
			// failing storage host may (KindUnavailable retries).
			return nil, err
		}
		out = append(out, protocol.Mount{Source: src, Target: vm.Path, ReadOnly: !vm.Permission.CanWrite()})
	}
	return out, nil
}

// releasedDestroy tears down what a released allocation ran: a kernel that
// ended, a placement that was aborted, an agent that was lost.
func (f *Forwarder) releasedDestroy(ctx context.Context, rec eventstore.RecordedEvent) ([]outgoing, error) {
	agentID, err := agentOf(rec)
	if err != nil {
		return nil, err
	}
	rel, err := decode[domain.AgentReleased](rec)
	if err != nil {
		return nil, err
	}
	m, err := protocol.NewKernelDestroy(agentID, rel.KernelID, rel.SessionID, rel.Reason, rel.At)
	if err != nil {
		return nil, err
	}
	return f.encode(ctx, agentID, rec.ID, m)
}

// sessionDestroy sends a destroy to every placed kernel of the session, as
// the session stood at this event.
func (f *Forwarder) sessionDestroy(ctx context.Context, rec eventstore.RecordedEvent, reason string, at time.Time) ([]outgoing, error) {
	stream, err := domain.ParseStreamOf(domain.StreamSession, rec.Stream)
	if err != nil {
		return nil, domain.Errorf(op, domain.KindInvalid, "%s event in stream %s", rec.Type, rec.Stream)
	}
	id, err := stream.UUID()
	if err != nil {
		return nil, domain.Errorf(op, domain.KindInvalid, "%s event in stream %s", rec.Type, rec.Stream)
	}
	events, err := f.readSession(ctx, id, int(rec.Revision)+1)
	if err != nil {
		return nil, err
	}
	s, err := domain.RehydrateSession(events)
	if err != nil {
		return nil, err
	}
	var out []outgoing
	for _, k := range s.Kernels() {
		if k.AgentID() == "" {
			continue // never placed: nothing runs
		}
		m, err := protocol.NewKernelDestroy(k.AgentID(), k.ID(), id, reason, at)
		if err != nil {
			return nil, err
		}
		o, err := f.encode(ctx, k.AgentID(), protocol.DerivedID(rec.ID, k.ID().String()), m)
		if err != nil {
			return nil, err
		}
		out = append(out, o...)
	}
	return out, nil
}

// readSession reads and decodes the first n events of a session's stream.
// A session that does not exist is KindNotFound; a store that fails,
// KindUnavailable.
func (f *Forwarder) readSession(ctx context.Context, id uuid.UUID, n int) ([]domain.RecordedEvent, error) {
	stream := domain.SessionStream(id).String()
	recs, err := f.log.ReadStream(ctx, stream, eventstore.ReadStreamOptions{Limit: n})
	switch {
	case errors.Is(err, eventstore.ErrStreamNotFound):
		return nil, domain.Errorf(op, domain.KindNotFound, "session %s does not exist", id)
	case err != nil:
		return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Message: "read " + stream, Err: err}
	case len(recs) == 0:
		return nil, domain.Errorf(op, domain.KindNotFound, "session %s does not exist", id)
	}
	return commands.DecodeStream(recs)
}

// encode builds the message for an agent's topic, sealed to the agent's
// key (protocol.Seal): what the bus keeps of it (a kernel's environment
// and mounts) is readable by that agent only.
func (f *Forwarder) encode(ctx context.Context, agentID string, id uuid.UUID, m protocol.Message) ([]outgoing, error) {
	topic, err := bus.AgentTopic(agentID)
	if err != nil {
		return nil, err
	}
	key, err := f.sealKey(ctx, agentID)
	if err != nil {
		return nil, err
	}
	msg, err := protocol.Encode(id, m)
	if err != nil {
		return nil, err
	}
	if err := protocol.Seal(msg, key); err != nil {
		return nil, err
	}
	return []outgoing{{topic: topic, msg: msg}}, nil
}

// agentFacts is what the forwarder needs of an agent.
type agentFacts struct {
	sealKey      string
	architecture string
}

// sealKey is the key the agent announced (domain.Agent.SealKey). An agent
// that announced none gets nothing: nothing goes on the bus unsealed.
func (f *Forwarder) sealKey(ctx context.Context, agentID string) (string, error) {
	a, err := f.agent(ctx, agentID)
	if err != nil {
		return "", err
	}
	if a.sealKey == "" {
		return "", domain.Errorf(op, domain.KindInvalid, "agent %s announced no seal key: nothing is sent to it unsealed", agentID)
	}
	return a.sealKey, nil
}

// agent reads (once, until it registers again) what the forwarder needs of
// an agent from its stream.
func (f *Forwarder) agent(ctx context.Context, agentID string) (agentFacts, error) {
	if a, ok := f.agents[agentID]; ok {
		return a, nil
	}
	stream := domain.AgentStream(agentID).String()
	recs, err := f.log.ReadStream(ctx, stream, eventstore.ReadStreamOptions{})
	switch {
	case errors.Is(err, eventstore.ErrStreamNotFound):
		return agentFacts{}, domain.Errorf(op, domain.KindNotFound, "agent %s does not exist", agentID)
	case err != nil:
		return agentFacts{}, &domain.Error{Op: op, Kind: domain.KindUnavailable, Message: "read " + stream, Err: err}
	}
	events, err := commands.DecodeStream(recs)
	if err != nil {
		return agentFacts{}, err
	}
	a, err := domain.RehydrateAgent(events)
	if err != nil {
		return agentFacts{}, err
	}
	if f.agents == nil {
		f.agents = map[string]agentFacts{}
	}
	facts := agentFacts{sealKey: a.SealKey(), architecture: a.Architecture()}
	f.agents[agentID] = facts
	return facts, nil
}

// imageServicePorts are the service ports of the session's image as
// registered for the agent's architecture (the reference as the session
// names it, else with its implicit "latest" tag, as the request was
// checked). An image not registered (any more) has none: the kernel
// still runs, without apps.
func (f *Forwarder) imageServicePorts(ctx context.Context, agentID, reference string) ([]domain.ServicePort, error) {
	a, err := f.agent(ctx, agentID)
	if err != nil {
		return nil, err
	}
	refs := []string{reference}
	if images.Validate(reference) == nil && images.Normalize(reference) != reference {
		refs = append(refs, images.Normalize(reference))
	}
	for _, ref := range refs {
		stream := domain.ImageStream(ref, domain.NormalizeArchitecture(a.architecture)).String()
		recs, err := f.log.ReadStream(ctx, stream, eventstore.ReadStreamOptions{})
		switch {
		case errors.Is(err, eventstore.ErrStreamNotFound):
			continue
		case err != nil:
			return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Message: "read " + stream, Err: err}
		}
		events, err := commands.DecodeStream(recs)
		if err != nil {
			return nil, err
		}
		img, err := domain.RehydrateImage(events)
		if err != nil {
			return nil, err
		}
		if img.Exists() {
			return img.Spec().ServicePorts, nil
		}
	}
	f.cfg.Logger.Info("the session's image is not registered for the agent's architecture: its kernel publishes only its pre-opened ports",
		"image", reference, "agent_id", agentID, "architecture", a.architecture)
	return nil, nil
}

func agentOf(rec eventstore.RecordedEvent) (string, error) {
	s, err := domain.ParseStreamOf(domain.StreamAgent, rec.Stream)
	if err != nil {
		return "", domain.Errorf(op, domain.KindInvalid, "%s event in stream %s", rec.Type, rec.Stream)
	}
	return s.ID, nil
}

// decode decodes the event's payload as E.
func decode[E domain.Event](rec eventstore.RecordedEvent) (E, error) {
	var zero E
	ev, err := domain.DecodeEvent(rec.Type, rec.Version, rec.Data)
	if err != nil {
		return zero, err
	}
	e, ok := ev.(E)
	if !ok {
		return zero, domain.Errorf(op, domain.KindInternal, "%s decoded as %T", rec.Type, ev)
	}
	return e, nil
}
