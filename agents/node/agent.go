package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nkeys"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/agents/accelerator"
	"github.com/cairnhq/cairn/agents/accelerator/nvml"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/agents/runtime/podman"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/busauth"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// Agent is a node agent. New validates its configuration; Run does the
// work until its context ends. Logs and Handler may be used from other
// goroutines while Run runs.
type Agent struct {
	cfg Config
	log *slog.Logger

	ledger  *ledger
	archive *logArchive
	// ports hands out the host ports of kernels' apps (set by Run).
	ports *portTable
	// apps is the transport of requests forwarded to kernels' apps.
	apps *http.Transport
	// sealKey opens the messages of the agent's topic; sealPublic is
	// announced in agent.register.
	sealKey    nkeys.KeyPair
	sealPublic string
	// verifier checks the manager's signature on HTTP requests; nil
	// without bus credentials (every request is then refused).
	verifier *busauth.RequestVerifier

	// Set by Run before any kernel is handled, read-only after; rt is also
	// read by Logs, hence guarded.
	inv accelerator.Inventory
	// gpus samples GPU utilisation for the idle signals (nil: no GPUs).
	gpus        GPUSampler
	cdi         accelerator.CDIInfo
	capacity    domain.Slots
	bus         *bus.Bus
	reportTopic string
	startedAt   time.Time
	address     string

	// kernelCtx is the context of kernel supervisors: it ends when Run
	// stops.
	kernelCtx context.Context

	mu      sync.Mutex
	running bool
	rt      runtime.Runtime
	kernels map[uuid.UUID]*kernel
	// wg counts the kernel supervisors.
	wg sync.WaitGroup

	// terms are the kernels' terminals (see terminal.go).
	terms *terminals
}

// New returns an agent for cfg (with its defaults applied), after
// validating it. A nil logger means slog.Default().
func New(cfg Config, logger *slog.Logger) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &domain.Error{Op: "agent.new", Kind: domain.KindInvalid, Err: err}
	}
	if logger == nil {
		logger = slog.Default()
	}
	cfg = cfg.WithDefaults()
	a := &Agent{cfg: cfg, log: logger.With("component", "agent", "agent_id", cfg.AgentID), terms: newTerminals()}
	if cfg.BusCredentialsFile != "" {
		issuer, err := busauth.CredentialsIssuer(cfg.BusCredentialsFile)
		if err != nil {
			return nil, &domain.Error{Op: "agent.new", Kind: domain.KindInvalid, Field: "bus_credentials_file", Err: err}
		}
		a.verifier = &busauth.RequestVerifier{AgentID: cfg.AgentID, Issuer: issuer, Delegated: proxyMayCall}
	}
	a.apps = newAppTransport()
	return a, nil
}

// Config is the agent's effective configuration.
func (a *Agent) Config() Config { return a.cfg }

// Run runs the agent until ctx ends, then returns nil; it returns an error
// when it cannot start (a bad GPU spec, Podman or the bus unreachable at
// start, the data directory unusable, the listen address taken) or when
// its bus connection is closed for good.
//
// In order: it opens its records, discovers its capacity (host CPU and
// memory, GPUs by Config.GPUs), connects to Podman and the bus, starts the
// HTTP endpoint, adopts the containers labelled with its id (see the
// package documentation), sends agent.register, then handles its topic
// and sends heartbeats. When ctx ends it stops handling, lets every kernel
// goroutine return (containers are left as they are: stopping the agent
// never stops a kernel), and closes its connections.
//
// An Agent runs once at a time; Run may be called again after it returned.
func (a *Agent) Run(ctx context.Context) error {
	a.mu.Lock()
	if a.running {
		a.mu.Unlock()
		return domain.Errorf("agent.run", domain.KindConflict, "agent %s is already running", a.cfg.AgentID)
	}
	a.running = true
	a.kernels = map[uuid.UUID]*kernel{}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.running, a.rt = false, nil
		a.mu.Unlock()
	}()

	a.startedAt = time.Now().UTC()
	a.log.Info("agent starting", "config", a.cfg.LogValue())
	if err := a.setUp(ctx); err != nil {
		if ctx.Err() != nil {
			// Stopped while starting (Podman or the bus not answered
			// yet): a stop, not a failure.
			a.log.Info("agent stopped while starting", "error", err)
			return nil
		}
		return err
	}
	defer a.closeBus()
	defer a.closeGPUs()

	srv, err := a.serveHTTP()
	if err != nil {
		return err
	}

	// Kernel supervisors live as long as runCtx; they are waited for
	// before the bus closes, since they report through it.
	runCtx, stop := context.WithCancel(ctx)
	a.kernelCtx = runCtx
	defer func() {
		stop()
		a.wg.Wait()
		// A terminal cannot be attached again after a restart (Podman
		// starts an exec session once): end them rather than leave their
		// shells behind.
		endCtx, cancel := context.WithTimeout(context.Background(), terminalEndTimeout)
		a.endTerminals(endCtx, a.terms.all(), "the agent stopped")
		cancel()
		if srv != nil {
			shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(shutdownCtx); err != nil {
				a.log.Warn("HTTP endpoint shutdown", "error", err)
			}
		}
		a.log.Info("agent stopped; its containers are left running")
	}()

	if err := a.adopt(runCtx); err != nil {
		return ignoreStop(ctx, err)
	}
	if err := a.register(runCtx); err != nil {
		return ignoreStop(ctx, err)
	}
	topic, err := bus.AgentTopic(a.cfg.AgentID)
	if err != nil {
		return err
	}
	var loops sync.WaitGroup
	loops.Add(1)
	go func() {
		defer loops.Done()
		a.announceLoop(runCtx)
	}()
	loops.Add(1)
	go func() {
		defer loops.Done()
		a.activityLoop(runCtx, newActivityProbe(a.newNotebookServer(), a.gpus, a.cfg.GPUIdleWindow, a.cfg.GPUIdleThreshold,
			min(a.cfg.ActivityInterval, notebookTimeout)))
	}()
	a.log.Info("agent running", "topic", topic, "durable", Durable(a.cfg.AgentID), "address", a.address)
	err = a.bus.Handle(runCtx, topic, Durable(a.cfg.AgentID), a.handle)
	stop()
	loops.Wait()
	return ignoreStop(ctx, err)
}

// setUp opens the records, discovers the node and connects to Podman and
// the bus.
func (a *Agent) setUp(ctx context.Context) error {
	var err error
	if a.ledger, err = openLedger(a.cfg.DataDir); err != nil {
		return err
	}
	if a.archive, err = openLogArchive(a.cfg.DataDir, a.cfg.LogArchiveBytes); err != nil {
		return err
	}
	a.ports = newPortTable(a.cfg.AppPortRange)
	if a.sealKey, a.sealPublic, err = loadSealKey(a.cfg.DataDir); err != nil {
		return err
	}
	if a.inv, err = nvml.Discover(a.cfg.GPUs); err != nil {
		return fmt.Errorf("agent: discover GPUs (%s): %w", a.cfg.GPUs, err)
	}
	if a.cdi, err = accelerator.DetectCDI(a.cfg.CDIDirs...); err != nil {
		return fmt.Errorf("agent: detect CDI specs: %w", err)
	}
	for _, skipped := range a.cdi.Skipped {
		a.log.Warn("CDI spec ignored", "error", skipped)
	}
	if a.capacity, err = a.hostSlots(); err != nil {
		return err
	}
	rt, err := podman.Connect(ctx, a.cfg.PodmanURI)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if err := a.checkUserNS(ctx, rt); err != nil {
		return err
	}
	b, err := bus.Connect(ctx, bus.Config{
		URL:             a.cfg.BusURL,
		CredentialsFile: a.cfg.BusCredentialsFile,
		CAFile:          a.cfg.BusCAFile,
		ClientName:      "cairn-agent-" + a.cfg.AgentID,
		AgentID:         a.cfg.AgentID,
		RetryMin:        a.cfg.RetryMin,
		RetryMax:        max(a.cfg.RetryMin, a.cfg.RetryMax),
	}, a.log)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	a.bus = b
	if a.reportTopic, err = bus.ReportTopic(a.cfg.AgentID); err != nil {
		return err
	}
	if len(a.inv.Allocatable()) > 0 {
		// Kept open for the run: utilisation is sampled every
		// ActivityInterval (the idle signals).
		lib, err := nvml.Open(a.cfg.GPUs)
		if err != nil {
			return fmt.Errorf("agent: open NVML (%s): %w", a.cfg.GPUs, err)
		}
		a.gpus = lib
	}
	a.mu.Lock()
	a.rt = rt
	a.mu.Unlock()
	a.log.Info("node discovered", "capacity", a.capacity, "gpus", len(a.inv.Allocatable()), "cdi_specs", a.cdi.Specs)
	return nil
}

// hostSlots is the capacity the agent registers: host CPU and memory
// (or their overrides) plus the accelerators' slots.
func (a *Agent) hostSlots() (domain.Slots, error) {
	host, err := HostCapacity()
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if a.cfg.CPU > 0 {
		host[domain.SlotCPU] = a.cfg.CPU
	}
	if a.cfg.MemoryBytes > 0 {
		host[domain.SlotMem] = domain.Units(a.cfg.MemoryBytes)
	}
	return a.inv.AgentSpec(a.cfg.AgentID, a.cfg.Architecture, host).Capacity, nil
}

func (a *Agent) closeGPUs() {
	if c, ok := a.gpus.(interface{ Close() error }); ok {
		if err := c.Close(); err != nil {
			a.log.Warn("NVML close", "error", err)
		}
	}
	a.gpus = nil
}

func (a *Agent) closeBus() {
	if err := a.bus.Close(); err != nil {
		a.log.Warn("bus close", "error", err)
	}
}

// serveHTTP starts the HTTP endpoint when Config.Listen is set and sets
// the address the agent advertises.
func (a *Agent) serveHTTP() (*http.Server, error) {
	if a.cfg.Listen == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("agent: listen: %w", err)
	}
	a.address = a.cfg.Advertise
	if a.address == "" {
		a.address = advertiseFor(ln.Addr())
	}
	// net/http already retries failed accepts; the listener adds the
	// connection limits (from the open-files limit) and counts failures.
	lln, err := httpapi.NewListener(ln, httpapi.ListenerConfig{Name: "agent", Logger: a.log, Registerer: prometheus.DefaultRegisterer})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("agent: listen: %w", err)
	}
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: httpapi.DefaultIdleTimeout}
	go func() {
		if err := srv.Serve(lln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("HTTP endpoint failed", "error", err)
		}
	}()
	a.log.Info("serving kernel logs", "listen", ln.Addr().String(), "address", a.address)
	return srv, nil
}

// ignoreStop is nil once ctx has ended: stopping is not an error.
func ignoreStop(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// runtime returns the container runtime while Run runs.
func (a *Agent) runtime() (runtime.Runtime, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rt, a.rt != nil
}
