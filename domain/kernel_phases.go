package domain

import (
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Wire names of the events that show a starting kernel's progress within
// a phase: how far its image pull is, and which of its apps answer.
const (
	TypeKernelPullProgressed = "kernel.pull-progressed"
	TypeKernelAppsReady      = "kernel.apps-ready"
)

// PullProgress is how far an agent is in pulling a kernel's image: layers
// and bytes done of the totals known so far (a total grows as the
// registry announces layers; zero: not known yet).
type PullProgress struct {
	LayersDone  int   `json:"layers_done"`
	LayersTotal int   `json:"layers_total"`
	BytesDone   int64 `json:"bytes_done"`
	BytesTotal  int64 `json:"bytes_total"`
}

// Percent is the share of the bytes done, 0 to 100 (0 while the total is
// unknown).
func (p PullProgress) Percent() int {
	if p.BytesTotal <= 0 {
		return 0
	}
	return int(min(100, p.BytesDone*100/p.BytesTotal))
}

// CheckPullProgress reports counts that are negative or past their total.
func CheckPullProgress(op, field string, p *PullProgress) error {
	switch {
	case p == nil:
		return nil
	case p.LayersDone < 0 || p.LayersTotal < 0 || p.BytesDone < 0 || p.BytesTotal < 0:
		return Invalid(op, field, "counts must not be negative")
	case p.LayersDone > p.LayersTotal:
		return Invalid(op, field+".layers_done", "%d is more than layers_total %d", p.LayersDone, p.LayersTotal)
	case p.BytesTotal > 0 && p.BytesDone > p.BytesTotal:
		return Invalid(op, field+".bytes_done", "%d is more than bytes_total %d", p.BytesDone, p.BytesTotal)
	}
	return nil
}

// AppReady is when a kernel's app (a published service port, by name)
// first answered its agent's probe.
type AppReady struct {
	Name string    `json:"name"`
	At   time.Time `json:"at"`
}

// KernelPullProgressed: the agent pulled more of the kernel's image. Agents
// send it rate-limited (see the agent's pull reports), so a pull adds a
// few of these to the session's stream, never one per chunk.
type KernelPullProgressed struct {
	KernelID uuid.UUID    `json:"kernel_id"`
	Progress PullProgress `json:"progress"`
	At       time.Time    `json:"at"`
}

// KernelAppsReady: more of a running kernel's apps answered. Apps lists
// every app ready so far (cumulative, sorted by name), so the latest event
// alone tells the whole readiness.
type KernelAppsReady struct {
	KernelID uuid.UUID  `json:"kernel_id"`
	Apps     []AppReady `json:"apps"`
	At       time.Time  `json:"at"`
}

func (KernelPullProgressed) EventType() string { return TypeKernelPullProgressed }
func (KernelAppsReady) EventType() string      { return TypeKernelAppsReady }

// PullProgress returns the latest progress of the kernel's image pull, if
// one was reported.
func (k Kernel) PullProgress() (PullProgress, bool) {
	if k.pull == nil {
		return PullProgress{}, false
	}
	return *k.pull, true
}

// AppsReady returns the kernel's apps that answered, sorted by name.
func (k Kernel) AppsReady() []AppReady { return slices.Clone(k.appsReady) }

// detailEvent returns the event a report means within the phase the
// kernel is already in, or nil: pull progress while the kernel pulls
// (when it moved), and apps newly ready while it runs in the container the
// report names (only apps it published).
func (k Kernel) detailEvent(r KernelReport) Event {
	switch {
	case r.Phase == PhasePulling && k.status == StatusPulling && r.Pull != nil:
		if k.pull != nil && *k.pull == *r.Pull {
			return nil
		}
		return KernelPullProgressed{KernelID: k.id, Progress: *r.Pull, At: r.At}
	case r.Phase == PhaseRunning && k.status == StatusRunning && r.ContainerID == k.containerID && len(r.ReadyApps) > 0:
		apps := slices.Clone(k.appsReady)
		for _, name := range r.ReadyApps {
			published := slices.ContainsFunc(k.servicePorts, func(p PublishedPort) bool { return p.Name == name })
			known := slices.ContainsFunc(apps, func(a AppReady) bool { return a.Name == name })
			if published && !known {
				apps = append(apps, AppReady{Name: name, At: r.At})
			}
		}
		if len(apps) == len(k.appsReady) {
			return nil
		}
		slices.SortFunc(apps, func(a, b AppReady) int { return strings.Compare(a.Name, b.Name) })
		return KernelAppsReady{KernelID: k.id, Apps: apps, At: r.At}
	}
	return nil
}

// applyDetail folds a within-phase event into the kernel.
func (k *Kernel) applyDetail(ev Event) {
	switch e := ev.(type) {
	case KernelPullProgressed:
		p := e.Progress
		k.pull = &p
	case KernelAppsReady:
		k.appsReady = slices.Clone(e.Apps)
	}
}
