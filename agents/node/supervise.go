package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

// Reasons the agent gives in its reports besides the domain's.
const (
	// reasonOrphaned: removed because no allocation holds it any more
	// (kernel.sync).
	reasonOrphaned = "orphaned"
	// reasonVanished: the container disappeared without the agent
	// removing it.
	reasonVanished = "container-vanished"
)

// supervise does everything to one kernel's container: bring it up
// (create and start it, or take over the adopted one), watch it until it
// exits, and remove it when asked. It returns when the container is gone,
// or when ctx ends (the agent stops), leaving the container as it is.
func (a *Agent) supervise(ctx context.Context, k *kernel) {
	work, cancelWork := context.WithCancel(ctx)
	defer cancelWork()
	go func() {
		select {
		case <-k.destroy:
			cancelWork()
		case <-work.Done():
		}
	}()

	if !k.destroyRequested() {
		a.bringUp(work, k)
	}
	select {
	case <-k.destroy:
	case <-ctx.Done():
		return
	}
	if ctx.Err() != nil {
		return // the agent stops: the destroy is finished after its restart
	}
	a.tearDown(ctx, k)
}

// bringUp creates and starts the kernel's container or takes over the
// adopted one, reports it, and watches it until it exits (or ctx ends).
func (a *Agent) bringUp(ctx context.Context, k *kernel) {
	var id string
	switch found := k.found; {
	case k.create != nil && (found == nil || found.State == runtime.StateCreated):
		c, ok := a.createKernel(ctx, k)
		if !ok {
			return
		}
		id = c.ID
	case found == nil:
		return
	default:
		if !a.reportAdopted(ctx, k, *found) {
			return
		}
		id = found.ID
	}
	// The apps are probed while the container runs: until watch returns.
	probeCtx, stopProbe := context.WithCancel(ctx)
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		a.probeApps(probeCtx, k, id)
	}()
	a.watch(ctx, k, id)
	stopProbe()
	<-probed
}

// reportAdopted reports a container found at start as it is; false when
// there is nothing to watch.
func (a *Agent) reportAdopted(ctx context.Context, k *kernel, c runtime.Container) bool {
	if c.State != runtime.StateCreated && k.create != nil {
		// Started before the agent stopped, but not recorded as such.
		if _, _, err := a.ledger.advance(k.id, k.session, stateStarted, func(r *record) { r.ContainerID = c.ID }); err != nil {
			a.log.Warn("kernel record not updated", "kernel_id", k.id, "error", err)
		}
	}
	switch c.State {
	case runtime.StateExited:
		a.setContainer(k, c.ID, false)
		s := a.status(k, domain.PhaseExited)
		s.ExitCode = c.ExitCode
		a.report(ctx, k, s)
		return false
	case runtime.StateCreated:
		// Created but never started, and no pending kernel.create: its
		// start failed (reported then) or its records are lost. Leave it
		// to a kernel.destroy or a kernel.sync.
		a.setContainer(k, c.ID, false)
		a.log.Warn("adopted a container that never started; leaving it for a destroy or a sync", "kernel_id", k.id, "container_id", c.ID)
		if r, ok, err := a.ledger.get(k.id); err == nil && ok && r.State == stateFailed {
			a.mu.Lock()
			k.last = &protocol.KernelStatus{SessionID: k.session, KernelID: k.id, AgentID: a.cfg.AgentID,
				Phase: domain.PhaseFailed, ContainerID: c.ID, Reason: r.Reason, Message: r.Message, ObservedAt: r.UpdatedAt}
			a.mu.Unlock()
		}
		return false
	}
	a.setContainer(k, c.ID, true)
	a.report(ctx, k, a.status(k, domain.PhaseRunning))
	return true
}

// createKernel pulls the image if needed, creates and starts the
// container, and reports each step; false when it failed (reported) or
// ctx ended.
func (a *Agent) createKernel(ctx context.Context, k *kernel) (runtime.Container, bool) {
	cmd := *k.create
	rt, _ := a.runtime()
	a.report(ctx, k, a.status(k, domain.PhasePreparing))

	var present bool
	err := a.retry(ctx, "image exists", func() (err error) {
		present, err = rt.ImageExists(ctx, cmd.Image)
		return err
	})
	if err != nil {
		return runtime.Container{}, a.fail(ctx, k, fmt.Errorf("image %s: %w", cmd.Image, err))
	}
	if !present {
		a.report(ctx, k, a.status(k, domain.PhasePulling))
		progress := a.pullProgress(ctx, k)
		err := a.retry(ctx, "pull", func() error { return rt.EnsureImage(ctx, cmd.Image, progress) })
		if err != nil {
			return runtime.Container{}, a.fail(ctx, k, fmt.Errorf("image %s: %w", cmd.Image, err))
		}
	}

	apps, err := a.prepareApps(k)
	if err != nil {
		return runtime.Container{}, a.fail(ctx, k, err)
	}
	spec, err := buildSpec(a.cfg, a.inv, a.cdi, cmd, apps)
	if err != nil {
		return runtime.Container{}, a.fail(ctx, k, err)
	}
	if spec.UserNS != nil {
		n, err := claimMounts(ctx, spec.Mounts, *spec.UserNS)
		mountEntriesClaimed.Add(float64(n))
		if err != nil {
			return runtime.Container{}, a.fail(ctx, k, err)
		}
		if n > 0 {
			a.log.Info("mounts given to the kernel's user namespace", "kernel_id", k.id, "entries", n, "host_id", spec.UserNS.HostID)
		}
	}
	a.report(ctx, k, a.status(k, domain.PhaseCreating))
	var c runtime.Container
	err = a.retry(ctx, "create", func() (err error) {
		c, _, err = rt.Ensure(ctx, spec)
		return err
	})
	if err != nil {
		return runtime.Container{}, a.fail(ctx, k, err)
	}
	a.setContainer(k, c.ID, false)
	if err := a.retry(ctx, "start", func() error { return rt.Start(ctx, c.ID) }); err != nil {
		return runtime.Container{}, a.fail(ctx, k, err)
	}
	if _, _, err := a.ledger.advance(k.id, k.session, stateStarted, func(r *record) { r.ContainerID = c.ID }); err != nil {
		// The container's labels are the truth from here; the pending
		// record only makes a restarted agent start it again (a no-op).
		a.log.Warn("kernel record not updated", "kernel_id", k.id, "error", err)
	}
	a.setContainer(k, c.ID, true)
	a.report(ctx, k, a.status(k, domain.PhaseRunning))
	return c, true
}

// prepareApps returns the host ports and the app token of a kernel about
// to be created: those its record holds (a creation resumed after a
// restart, whose container may already exist with them), or new ones,
// recorded before the container is created so that a restarted agent
// keeps them.
func (a *Agent) prepareApps(k *kernel) (kernelApps, error) {
	r, ok, err := a.ledger.get(k.id)
	if err != nil {
		return kernelApps{}, err
	}
	if ok && r.AppToken != "" {
		a.ports.reserve(k.id, r.Ports)
		apps := kernelApps{ports: r.Ports, token: r.AppToken}
		a.setApps(k, apps)
		return apps, nil
	}
	ports, err := a.ports.allocate(k.id, k.create.ServicePorts)
	if err != nil {
		return kernelApps{}, err
	}
	apps := kernelApps{ports: ports, token: newAppToken()}
	if _, _, err := a.ledger.advance(k.id, k.session, statePending, func(r *record) {
		r.Ports, r.AppToken = apps.ports, apps.token
	}); err != nil {
		a.ports.release(k.id)
		return kernelApps{}, err
	}
	a.setApps(k, apps)
	return apps, nil
}

// fail records and reports that the kernel could not be created or
// started; it returns false for createKernel's convenience. When ctx has
// ended (the agent stops, or the kernel is being destroyed) it does
// nothing: a restart resumes the creation, a destroy reports removed.
func (a *Agent) fail(ctx context.Context, k *kernel, cause error) bool {
	if ctx.Err() != nil {
		return false
	}
	a.ports.release(k.id) // the container never runs: nothing holds them
	s := a.status(k, domain.PhaseFailed)
	s.Reason, s.Message = domain.ReasonFailedToStart, cause.Error()
	if _, _, err := a.ledger.advance(k.id, k.session, stateFailed, func(r *record) {
		r.Reason, r.Message, r.ContainerID = s.Reason, s.Message, s.ContainerID
	}); err != nil {
		a.log.Warn("kernel record not updated", "kernel_id", k.id, "error", err)
	}
	a.report(ctx, k, s)
	return false
}

// watch waits for the container to exit and reports its exit code. A
// container that disappears is reported removed. A wait that fails
// otherwise is tried again every RetryMin until the agent stops.
func (a *Agent) watch(ctx context.Context, k *kernel, id string) {
	rt, _ := a.runtime()
	var code int
	wait := func() (err error) {
		code, err = rt.Wait(ctx, id)
		if errors.Is(err, runtime.ErrNotFound) {
			return backoff.Permanent(err)
		}
		return err
	}
	notify := func(err error, _ time.Duration) {
		a.log.Warn("waiting for the kernel failed; retrying", "kernel_id", k.id, "container_id", id, "error", err)
	}
	err := backoff.RetryNotify(wait, backoff.WithContext(backoff.NewConstantBackOff(a.cfg.RetryMin), ctx), notify)
	switch {
	case err == nil:
		a.setContainer(k, id, false)
		s := a.status(k, domain.PhaseExited)
		s.ExitCode = code
		a.report(ctx, k, s)
	case ctx.Err() != nil:
	case errors.Is(err, runtime.ErrNotFound):
		a.vanished(ctx, k)
	}
}

// vanished records and reports a kernel whose container was removed
// behind the agent's back.
func (a *Agent) vanished(ctx context.Context, k *kernel) {
	a.log.Warn("kernel container vanished", "kernel_id", k.id)
	a.setContainer(k, "", false)
	a.ports.release(k.id)
	if _, _, err := a.ledger.advance(k.id, k.session, stateRemoved, func(r *record) { r.Reason = reasonVanished }); err != nil {
		a.log.Warn("kernel record not updated", "kernel_id", k.id, "error", err)
	}
	s := a.status(k, domain.PhaseRemoved)
	s.Reason = reasonVanished
	a.report(ctx, k, s)
}

// tearDown keeps the kernel's logs, removes its container, records and
// reports it removed, and forgets the kernel. The destroy was recorded
// before it was accepted, so an agent stopped meanwhile finishes it after
// its restart.
func (a *Agent) tearDown(ctx context.Context, k *kernel) {
	rt, _ := a.runtime()
	name := runtime.ContainerName(k.id.String())
	log := a.log.With("kernel_id", k.id, "session_id", k.session)

	endCtx, cancel := context.WithTimeout(ctx, terminalEndTimeout)
	a.closeTerminals(endCtx, k.id, "the kernel is being destroyed")
	cancel()

	keep := &tailKeeper{max: a.cfg.LogArchiveBytes}
	_, err := rt.StreamLogs(ctx, name, runtime.LogRange{}, keep)
	switch {
	case err == nil:
		logs, start := keep.kept()
		if err := a.archive.save(k.id, logs, start); err != nil {
			log.Warn("kernel logs not kept", "error", err)
		}
	case !errors.Is(err, runtime.ErrNotFound):
		log.Warn("kernel logs not kept", "error", err)
	}
	// Removing must happen: retry whatever the error, until the agent stops.
	always := func(error) bool { return true }
	if err := a.retryWhile(ctx, "remove", always, func() error { return rt.Remove(ctx, name) }); err != nil {
		return
	}
	r, _, err := a.ledger.advance(k.id, k.session, stateRemoved, nil)
	if err != nil {
		log.Warn("kernel record not updated", "error", err)
	}
	s := a.status(k, domain.PhaseRemoved)
	s.Reason = r.Reason
	a.setContainer(k, "", false)
	a.drop(k)
	a.ports.release(k.id) // after drop: the endpoint no longer finds the kernel
	a.terms.forget(k.id)
	a.report(ctx, k, s)
}
