package node

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/accelerator"
	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/domain"
)

// notebookApp is the service port name of an image's Jupyter server,
// whose kernels the agent watches for use.
const notebookApp = "jupyter"

// notebookTimeout bounds one question to a kernel's Jupyter server.
const notebookTimeout = 5 * time.Second

// GPUSampler samples the utilisation of the node's whole GPUs;
// *nvml.Library satisfies it.
type GPUSampler interface {
	Utilization() ([]accelerator.Utilization, error)
}

// watched is what the activity probe looks at for one running kernel.
type watched struct {
	kernel, session uuid.UUID
	// terminal is when a terminal of the kernel last had input or output.
	terminal time.Time
	// notebook is the kernel's Jupyter server, nil if it has none.
	notebook *NotebookApp
	// gpus are the devices allocated to it.
	gpus []string
}

// activityProbe tells, at each look, which signals of use each kernel
// showed since the previous look. It remembers per kernel what it saw
// last (the latest terminal activity and notebook activity) and the GPU
// samples of the window.
type activityProbe struct {
	notebooks NotebookServer
	gpus      GPUSampler // nil: no GPUs
	window    time.Duration
	threshold float64
	timeout   time.Duration // of one question to a notebook server

	mu   sync.Mutex
	seen map[uuid.UUID]*kernelSeen
}

type kernelSeen struct {
	terminal, notebook time.Time
	gpu                []gpuSample
}

type gpuSample struct {
	at      time.Time
	percent float64
}

func newActivityProbe(notebooks NotebookServer, gpus GPUSampler, window time.Duration, thresholdPercent int, timeout time.Duration) *activityProbe {
	return &activityProbe{notebooks: notebooks, gpus: gpus, window: window, threshold: float64(thresholdPercent),
		timeout: timeout, seen: map[uuid.UUID]*kernelSeen{}}
}

// look returns, by kernel, the sorted signals each kernel showed at now
// (kernels that showed none are absent), and forgets kernels no longer
// watched. Errors (a notebook server that does not answer, NVML failing)
// only mean no signal from that source; they are returned for the logs.
func (p *activityProbe) look(ctx context.Context, now time.Time, kernels []watched) (map[uuid.UUID][]string, []error) {
	var errs []error
	util := map[string]float64{}
	if p.gpus != nil && slices.ContainsFunc(kernels, func(w watched) bool { return len(w.gpus) > 0 }) {
		samples, err := p.gpus.Utilization()
		if err != nil {
			errs = append(errs, fmt.Errorf("gpu utilisation: %w", err))
		}
		for _, u := range samples {
			util[u.DeviceID] = float64(u.GPUPercent)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[uuid.UUID][]string{}
	live := map[uuid.UUID]bool{}
	for _, w := range kernels {
		live[w.kernel] = true
		s := p.seen[w.kernel]
		if s == nil {
			s = &kernelSeen{}
			p.seen[w.kernel] = s
		}
		var signals []string
		if w.terminal.After(s.terminal) {
			s.terminal = w.terminal
			signals = append(signals, protocol.SignalTerminal)
		}
		if w.notebook != nil {
			active, err := p.notebookActive(ctx, s, *w.notebook)
			if err != nil {
				errs = append(errs, fmt.Errorf("kernel %s: notebook: %w", w.kernel, err))
			}
			if active {
				signals = append(signals, protocol.SignalNotebook)
			}
		}
		if p.gpuActive(s, now, w.gpus, util) {
			signals = append(signals, protocol.SignalGPU)
		}
		if len(signals) > 0 {
			slices.Sort(signals)
			out[w.kernel] = signals
		}
	}
	for id := range p.seen {
		if !live[id] {
			delete(p.seen, id)
		}
	}
	return out, errs
}

// notebookActive: a notebook kernel busy, or one active since the last
// look (a cell that ran and finished between two looks), is use.
func (p *activityProbe) notebookActive(ctx context.Context, s *kernelSeen, app NotebookApp) (bool, error) {
	qctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	kernels, err := p.notebooks.Kernels(qctx, app)
	if err != nil {
		return false, err
	}
	active := false
	for _, k := range kernels {
		if k.ExecutionState == "busy" {
			active = true
		}
		if k.LastActivity.After(s.notebook) {
			s.notebook = k.LastActivity
			active = true
		}
	}
	return active, nil
}

// gpuActive samples the kernel's GPUs (their mean utilisation now) and
// tells whether the mean of the samples over the window is at or above
// the threshold. GPUs NVML does not sample (MIG devices) give no signal.
func (p *activityProbe) gpuActive(s *kernelSeen, now time.Time, gpus []string, util map[string]float64) bool {
	var sum float64
	n := 0
	for _, id := range gpus {
		if v, ok := util[id]; ok {
			sum += v
			n++
		}
	}
	if n > 0 {
		s.gpu = append(s.gpu, gpuSample{at: now, percent: sum / float64(n)})
	}
	s.gpu = slices.DeleteFunc(s.gpu, func(g gpuSample) bool { return !g.at.After(now.Add(-p.window)) })
	if len(s.gpu) == 0 {
		return false
	}
	var total float64
	for _, g := range s.gpu {
		total += g.percent
	}
	return total/float64(len(s.gpu)) >= p.threshold
}

// watchedKernels lists what the probe looks at: every running kernel.
func (a *Agent) watchedKernels() []watched {
	var out []watched
	for _, k := range a.snapshot() {
		a.mu.Lock()
		running, apps, create := k.running, k.apps, k.create
		a.mu.Unlock()
		if !running {
			continue
		}
		w := watched{kernel: k.id, session: k.session, terminal: a.TerminalActivity(k.id)}
		for _, p := range apps.ports {
			if p.Name == notebookApp && p.Protocol == domain.ServiceProtocolHTTP {
				w.notebook = &NotebookApp{
					URL:   "http://127.0.0.1:" + strconv.Itoa(p.HostPort) + "/v1/sessions/" + k.session.String() + "/apps/" + notebookApp + "/",
					Token: apps.token,
				}
			}
		}
		if create != nil {
			for _, d := range create.Devices {
				w.gpus = append(w.gpus, d.DeviceID)
			}
		}
		out = append(out, w)
	}
	return out
}

// activityLoop looks for use inside the running kernels every
// ActivityInterval and reports it, one kernel.activity per session that
// showed some, until ctx ends.
func (a *Agent) activityLoop(ctx context.Context, probe *activityProbe) {
	t := time.NewTicker(a.cfg.ActivityInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			a.reportActivity(ctx, probe)
		}
	}
}

// reportActivity looks once and sends what it saw.
func (a *Agent) reportActivity(ctx context.Context, probe *activityProbe) {
	kernels := a.watchedKernels()
	seen, errs := probe.look(ctx, time.Now(), kernels)
	for _, err := range errs {
		a.log.Debug("activity probe", "error", err)
	}
	bySession := map[uuid.UUID]*protocol.KernelActivity{}
	var order []uuid.UUID
	for _, w := range kernels {
		signals := seen[w.kernel]
		if len(signals) == 0 {
			continue
		}
		m := bySession[w.session]
		if m == nil {
			m = &protocol.KernelActivity{SessionID: w.session, KernelID: w.kernel, AgentID: a.cfg.AgentID}
			bySession[w.session] = m
			order = append(order, w.session)
		}
		m.Signals = append(m.Signals, signals...)
	}
	for _, id := range order {
		m := bySession[id]
		slices.Sort(m.Signals)
		m.Signals = slices.Compact(m.Signals)
		m.ObservedAt = time.Now().UTC()
		// One interval to get it out: activity seen now is reported by the
		// next look if this one is lost (a look finds nothing new only when
		// nothing happened).
		pctx, cancel := context.WithTimeout(ctx, a.cfg.ActivityInterval)
		msg, err := protocol.NewMessage(*m)
		if err == nil {
			err = a.bus.Publish(pctx, a.reportTopic, msg)
		}
		cancel()
		if err != nil && ctx.Err() == nil {
			a.log.Warn("kernel activity not sent", "session_id", m.SessionID, "signals", m.Signals, "error", err)
		}
	}
}

// newNotebookServer is the agent's client of its kernels' Jupyter servers:
// loopback only, over the apps transport.
func (a *Agent) newNotebookServer() NotebookServer {
	return jupyterAPI{client: &http.Client{Transport: a.apps}}
}
