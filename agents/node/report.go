package node

import (
	"context"
	"time"

	"github.com/cairnhq/cairn/agents/protocol"
)

// publish sends m to the reports topic, retrying while the bus is
// unavailable (the same message each time, so JetStream drops a copy that
// was stored after all), until ctx ends.
func (a *Agent) publish(ctx context.Context, m protocol.Message) error {
	msg, err := protocol.NewMessage(m)
	if err != nil {
		return err
	}
	return a.retry(ctx, "publish "+m.MessageType(), func() error {
		return a.bus.Publish(ctx, a.reportTopic, msg)
	})
}

// report sends a kernel.status about k and remembers it as k's last. A
// report that cannot be sent before ctx ends is given up: a restarted
// agent reports every kernel again.
func (a *Agent) report(ctx context.Context, k *kernel, s protocol.KernelStatus) {
	s.ObservedAt = time.Now().UTC()
	a.mu.Lock()
	k.last = &s
	a.mu.Unlock()
	a.send(ctx, s)
}

// send publishes a kernel.status, logging the outcome.
func (a *Agent) send(ctx context.Context, s protocol.KernelStatus) {
	log := a.log.With("kernel_id", s.KernelID, "session_id", s.SessionID, "phase", s.Phase)
	if err := a.publish(ctx, s); err != nil {
		if ctx.Err() == nil {
			log.Error("kernel report not sent", "error", err)
		}
		return
	}
	switch {
	case s.Reason != "":
		log.Info("kernel reported", "container_id", s.ContainerID, "exit_code", s.ExitCode, "reason", s.Reason, "message", s.Message)
	default:
		log.Info("kernel reported", "container_id", s.ContainerID, "exit_code", s.ExitCode)
	}
}

// resend sends k's last report again, if it has one (for a kernel.sync).
func (a *Agent) resend(ctx context.Context, k *kernel) {
	a.mu.Lock()
	last := k.last
	a.mu.Unlock()
	if last != nil {
		s := *last
		s.ObservedAt = time.Now().UTC()
		a.send(ctx, s)
	}
}

// register sends agent.register, retrying until the bus takes it.
func (a *Agent) register(ctx context.Context) error {
	m := protocol.AgentRegister{
		AgentID:      a.cfg.AgentID,
		Architecture: a.cfg.Architecture,
		Capacity:     a.capacity.Clone(),
		Devices:      a.inv.DomainDevices(),
		Kernels:      a.containerKernels(),
		Address:      a.address,
		SealKey:      a.sealPublic,
		Version:      a.cfg.Version,
		StartedAt:    a.startedAt,
		At:           time.Now().UTC(),
	}
	if err := a.publish(ctx, m); err != nil {
		return err
	}
	a.log.Info("registered", "capacity", m.Capacity, "devices", len(m.Devices), "kernels", len(m.Kernels))
	return nil
}

// heartbeat sends one agent.heartbeat; a failure is logged, the next one
// comes anyway.
func (a *Agent) heartbeat(ctx context.Context) {
	m := protocol.AgentHeartbeat{
		AgentID:        a.cfg.AgentID,
		Running:        a.runningKernels(),
		IntervalMillis: a.cfg.HeartbeatInterval.Milliseconds(),
		StartedAt:      a.startedAt,
		At:             time.Now().UTC(),
	}
	// One interval to get it out: a late heartbeat is worthless.
	hctx, cancel := context.WithTimeout(ctx, a.cfg.HeartbeatInterval)
	defer cancel()
	msg, err := protocol.NewMessage(m)
	if err == nil {
		err = a.bus.Publish(hctx, a.reportTopic, msg)
	}
	if err != nil && ctx.Err() == nil {
		a.log.Warn("heartbeat not sent", "error", err)
	}
}

// announceLoop sends a heartbeat every HeartbeatInterval and registers
// again every RegisterInterval, until ctx ends.
func (a *Agent) announceLoop(ctx context.Context) {
	hb := time.NewTicker(a.cfg.HeartbeatInterval)
	defer hb.Stop()
	reg := time.NewTicker(a.cfg.RegisterInterval)
	defer reg.Stop()
	a.heartbeat(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hb.C:
			a.heartbeat(ctx)
		case <-reg.C:
			if err := a.register(ctx); err != nil && ctx.Err() == nil {
				a.log.Warn("register not sent", "error", err)
			}
		}
	}
}
