package node

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

// How a starting kernel's progress is reported (see the package doc):
// pull progress at most every pullReportInterval and only when it moved
// by pullReportStep percent or a layer more is done, so that a pull adds
// a few dozen events to the session's stream at most, never one per
// chunk; apps are probed every appProbeInterval until they answer or
// appProbeTimeout passes.
const (
	pullReportInterval = 2 * time.Second
	pullReportStep     = 5
	appProbeInterval   = 500 * time.Millisecond
	appProbeTimeout    = 15 * time.Minute
	// appProbeRequest bounds one probe of one app.
	appProbeRequest = 2 * time.Second
)

// pullThrottle decides which pull progress reports are worth sending.
type pullThrottle struct {
	now      func() time.Time
	interval time.Duration
	step     int

	sent   bool
	last   domain.PullProgress
	lastAt time.Time
}

func newPullThrottle(now func() time.Time) *pullThrottle {
	return &pullThrottle{now: now, interval: pullReportInterval, step: pullReportStep}
}

// offer returns the progress to report now, if p is worth a report: the
// interval has passed since the last one and the pull moved by a step (or
// finished a layer, or announced its first sizes).
func (t *pullThrottle) offer(p runtime.PullProgress) (domain.PullProgress, bool) {
	d := domain.PullProgress{LayersDone: p.LayersDone, LayersTotal: p.LayersTotal, BytesDone: p.BytesDone, BytesTotal: p.BytesTotal}
	now := t.now()
	if t.sent && now.Sub(t.lastAt) < t.interval {
		return d, false
	}
	moved := !t.sent || d.LayersDone != t.last.LayersDone ||
		d.Percent()-t.last.Percent() >= t.step || (t.last.BytesTotal == 0 && d.BytesTotal > 0)
	if !moved {
		return d, false
	}
	t.sent, t.last, t.lastAt = true, d, now
	return d, true
}

// pullProgress returns the progress callback of a kernel's image pull:
// it reports the kernel pulling with its progress, throttled.
func (a *Agent) pullProgress(ctx context.Context, k *kernel) func(runtime.PullProgress) {
	t := newPullThrottle(time.Now)
	return func(p runtime.PullProgress) {
		d, ok := t.offer(p)
		if !ok {
			return
		}
		s := a.status(k, domain.PhasePulling)
		s.Pull = &d
		a.report(ctx, k, s)
	}
}

// probeApps probes the apps of k's running container (id) on their
// published host ports until each answers, reporting the kernel running
// with every app ready so far each time one more answers. It returns
// when all have answered, when appProbeTimeout has passed, or when ctx
// ends (the container exited or is being destroyed, or the agent stops).
func (a *Agent) probeApps(ctx context.Context, k *kernel, id string) {
	apps, ok := a.appsOf(k.id)
	if !ok || len(apps.ports) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, appProbeTimeout)
	defer cancel()
	client := &http.Client{Transport: newAppTransport(), Timeout: appProbeRequest,
		// Any answer is an answer: a redirect is not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()

	var ready []string
	tick := time.NewTicker(appProbeInterval)
	defer tick.Stop()
	for {
		more := false
		for _, p := range apps.ports {
			if slices.Contains(ready, p.Name) || !answers(ctx, client, p) {
				continue
			}
			ready = append(ready, p.Name)
			more = true
		}
		if more {
			slices.Sort(ready)
			a.log.Info("kernel apps ready", "kernel_id", k.id, "session_id", k.session, "apps", ready)
			a.reportRunning(ctx, k, id, slices.Clone(ready))
		}
		if len(ready) == len(apps.ports) {
			return
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				a.log.Warn("kernel apps never answered", "kernel_id", k.id, "session_id", k.session, "ready", ready)
			}
			return
		case <-tick.C:
		}
	}
}

// answers reports whether the app on p answers on its host port: an HTTP
// app (http, preopen) with any HTTP response, a TCP service by accepting
// a connection.
func answers(ctx context.Context, client *http.Client, p domain.PublishedPort) bool {
	addr := net.JoinHostPort(appHost, strconv.Itoa(p.HostPort))
	if p.Protocol == domain.ServiceProtocolTCP {
		c, err := (&net.Dialer{Timeout: appProbeRequest}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return true
}

// reportRunning reports k running in container id with its ready apps,
// unless it no longer runs there (its exit was reported meanwhile: a
// late readiness report must not become its last report).
func (a *Agent) reportRunning(ctx context.Context, k *kernel, id string, ready []string) {
	s := a.status(k, domain.PhaseRunning)
	s.ReadyApps = ready
	s.ObservedAt = time.Now().UTC()
	a.mu.Lock()
	if !k.running || k.containerID != id {
		a.mu.Unlock()
		return
	}
	k.last = &s
	a.mu.Unlock()
	a.send(ctx, s)
}
