package node

import (
	"bytes"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

// noRevision is the allocation revision of a container that carries none
// (not created by this agent's kernel.create handling): any kernel.sync
// that does not list its kernel makes it an orphan.
const noRevision = -1

// kernel is one kernel the agent looks after, from a kernel.create (or an
// adopted container) until its container is removed. One goroutine, its
// supervisor (see supervise), does everything to its container, so that
// creating, watching and removing never interleave.
type kernel struct {
	id, session uuid.UUID
	// create is the accepted kernel.create; nil for a container adopted
	// without a pending record.
	create *protocol.KernelCreate
	// allocRevision is the allocation's revision in the agent's stream
	// (noRevision if unknown).
	allocRevision int64
	// found is the container adoption found, if any.
	found *runtime.Container

	// destroy is closed to ask the supervisor to remove the container.
	destroy     chan struct{}
	destroyOnce sync.Once
	// done is closed when the supervisor has returned.
	done chan struct{}

	// Guarded by Agent.mu.
	containerID string
	running     bool
	apps        kernelApps             // set before the container is created or adopted
	last        *protocol.KernelStatus // the last report sent
}

func newKernel(id, session uuid.UUID, create *protocol.KernelCreate) *kernel {
	k := &kernel{id: id, session: session, create: create, allocRevision: noRevision,
		destroy: make(chan struct{}), done: make(chan struct{})}
	if create != nil {
		k.allocRevision = create.AllocationRevision
	}
	return k
}

// requestDestroy asks the supervisor to remove the container; later calls
// do nothing.
func (k *kernel) requestDestroy() { k.destroyOnce.Do(func() { close(k.destroy) }) }

func (k *kernel) destroyRequested() bool {
	select {
	case <-k.destroy:
		return true
	default:
		return false
	}
}

// lookup returns the kernel the agent looks after, if any.
func (a *Agent) lookup(id uuid.UUID) *kernel {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.kernels[id]
}

// snapshot returns every kernel the agent looks after, by id.
func (a *Agent) snapshot() []*kernel {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*kernel, 0, len(a.kernels))
	for _, k := range a.kernels {
		out = append(out, k)
	}
	slices.SortFunc(out, func(x, y *kernel) int { return compareUUID(x.id, y.id) })
	return out
}

// start registers k and starts its supervisor, unless the agent already
// looks after that kernel (then it returns false). The supervisor lives as
// long as Run (not as the message that asked for it).
func (a *Agent) start(k *kernel) bool {
	a.mu.Lock()
	if _, ok := a.kernels[k.id]; ok {
		a.mu.Unlock()
		return false
	}
	a.kernels[k.id] = k
	a.wg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.wg.Done()
		defer close(k.done)
		a.supervise(a.kernelCtx, k)
	}()
	return true
}

// drop forgets k once its container is gone.
func (a *Agent) drop(k *kernel) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kernels[k.id] == k {
		delete(a.kernels, k.id)
	}
}

// setContainer records k's container and whether it runs.
func (a *Agent) setContainer(k *kernel, id string, running bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k.containerID, k.running = id, running
}

// runningKernels returns, sorted, the kernels whose containers run.
func (a *Agent) runningKernels() []uuid.UUID {
	var out []uuid.UUID
	for _, k := range a.snapshot() {
		a.mu.Lock()
		if k.running {
			out = append(out, k.id)
		}
		a.mu.Unlock()
	}
	return out
}

// containerKernels returns, sorted, the kernels that have a container.
func (a *Agent) containerKernels() []uuid.UUID {
	var out []uuid.UUID
	for _, k := range a.snapshot() {
		a.mu.Lock()
		if k.containerID != "" {
			out = append(out, k.id)
		}
		a.mu.Unlock()
	}
	return out
}

// status returns a report about k in phase, with its container id and,
// when running, its published ports.
func (a *Agent) status(k *kernel, phase domain.KernelPhase) protocol.KernelStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := protocol.KernelStatus{
		SessionID: k.session, KernelID: k.id, AgentID: a.cfg.AgentID,
		Phase: phase, ContainerID: k.containerID,
	}
	if phase == domain.PhaseRunning {
		s.ServicePorts = slices.Clone(k.apps.ports)
	}
	return s
}

// setApps records what k's apps are served with.
func (a *Agent) setApps(k *kernel, apps kernelApps) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k.apps = apps
}

// appsOf returns what the kernel's apps are served with; false for a
// kernel the agent does not look after.
func (a *Agent) appsOf(id uuid.UUID) (kernelApps, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k, ok := a.kernels[id]
	if !ok {
		return kernelApps{}, false
	}
	return k.apps, true
}

func compareUUID(x, y uuid.UUID) int { return bytes.Compare(x[:], y[:]) }
