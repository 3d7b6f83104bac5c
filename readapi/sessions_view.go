package readapi

import (
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/sessions"
)

// sessionView is a session on the wire (docs/api/openapi.yaml, Session).
type sessionView struct {
	ID            uuid.UUID          `json:"id"`
	Name          string             `json:"name"`
	Owner         domain.Owner       `json:"owner"`
	Domain        string             `json:"domain"`
	Project       string             `json:"project"`
	ResourceGroup string             `json:"resource_group"`
	Type          domain.SessionType `json:"type"`
	Image         string             `json:"image"`
	Command       string             `json:"command,omitempty"`
	Priority      int                `json:"priority"`
	ClusterMode   domain.ClusterMode `json:"cluster_mode"`
	ClusterSize   int                `json:"cluster_size"`

	Status         domain.SessionStatus `json:"status"`
	StatusReason   string               `json:"status_reason,omitempty"`
	StatusMessage  string               `json:"status_message,omitempty"`
	PendingDetails []string             `json:"pending_details,omitempty"`
	PendingTries   int                  `json:"pending_tries,omitempty"`

	AgentIDs       []string     `json:"agent_ids"`
	Devices        []deviceView `json:"devices"`
	RequestedSlots domain.Slots `json:"requested_slots"`
	Result         string       `json:"result,omitempty"`
	ExitCode       *int         `json:"exit_code,omitempty"`
	CreatedAt      time.Time    `json:"created_at"`
	ScheduledAt    *time.Time   `json:"scheduled_at,omitempty"`
	StartedAt      *time.Time   `json:"started_at,omitempty"`
	TerminatedAt   *time.Time   `json:"terminated_at,omitempty"`
	Position       uint64       `json:"position"`
	Kernels        []kernelView `json:"kernels"`
	// LastUsedAt is the latest use of the session (an API request about
	// it, app traffic, activity its agent reported).
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	// Idle and Lifetime are the limits that will end the session (only
	// in GET /v1/sessions/{id}; see sessionLimits).
	Idle     *idleView     `json:"idle,omitempty"`
	Lifetime *lifetimeView `json:"lifetime,omitempty"`
}

// deviceView is one device share a session's kernel holds.
type deviceView struct {
	KernelID uuid.UUID `json:"kernel_id"`
	AgentID  string    `json:"agent_id"`
	DeviceID string    `json:"device_id"`
	Amount   string    `json:"amount"`
}

// kernelView is one kernel of a session.
type kernelView struct {
	ID             uuid.UUID            `json:"id"`
	Index          int                  `json:"index"`
	Role           domain.KernelRole    `json:"role"`
	AgentID        string               `json:"agent_id,omitempty"`
	ContainerID    string               `json:"container_id,omitempty"`
	Status         domain.SessionStatus `json:"status"`
	StatusReason   string               `json:"status_reason,omitempty"`
	StatusMessage  string               `json:"status_message,omitempty"`
	ExitCode       *int                 `json:"exit_code,omitempty"`
	RequestedSlots domain.Slots         `json:"requested_slots"`
	Devices        []kernelDeviceView   `json:"devices"`
	// ServicePorts are the kernel's apps as its agent published them
	// (empty until it runs). The host port is on the agent's loopback:
	// shown, as no secret and no way in; apps are reached through the app
	// proxy. Each says whether the app answered its agent's probe yet.
	ServicePorts []servicePortView `json:"service_ports"`
	// PullProgress is how far the pull of the kernel's image is (latest
	// report; absent when the image was present or no report came).
	PullProgress *pullProgressView `json:"pull_progress,omitempty"`
}

// servicePortView is one app of a kernel: its published port, and
// whether it is ready (it answered its agent's probe, at ReadyAt).
type servicePortView struct {
	domain.PublishedPort
	Ready   bool       `json:"ready"`
	ReadyAt *time.Time `json:"ready_at,omitempty"`
}

// pullProgressView is a kernel's image pull progress, with the share of
// bytes done as a percentage.
type pullProgressView struct {
	domain.PullProgress
	Percent int `json:"percent"`
}

func viewServicePorts(k sessions.Kernel) []servicePortView {
	out := make([]servicePortView, len(k.ServicePorts))
	for i, p := range k.ServicePorts {
		out[i] = servicePortView{PublishedPort: p}
		for _, r := range k.AppsReady {
			if r.Name == p.Name {
				at := r.At
				out[i].Ready, out[i].ReadyAt = true, &at
			}
		}
	}
	return out
}

// kernelDeviceView is one device share of a kernel.
type kernelDeviceView struct {
	DeviceID string `json:"device_id"`
	Amount   string `json:"amount"`
}

func viewSession(s sessions.Session) sessionView {
	v := sessionView{
		ID: s.ID, Name: s.Name, Owner: s.Owner, Domain: s.Domain, Project: s.Project,
		ResourceGroup: s.ResourceGroup, Type: s.Type, Image: s.Image, Command: s.Command,
		Priority: s.Priority, ClusterMode: s.ClusterMode, ClusterSize: s.ClusterSize,
		Status: s.Status, StatusReason: s.StatusReason, StatusMessage: s.StatusMessage,
		PendingDetails: s.PendingDetails, PendingTries: s.PendingTries,
		AgentIDs: nonNil(s.AgentIDs), Devices: make([]deviceView, len(s.Devices)),
		RequestedSlots: nonNilSlots(s.RequestedSlots), Result: string(s.Result), ExitCode: s.ExitCode,
		CreatedAt: s.CreatedAt, ScheduledAt: s.ScheduledAt, StartedAt: s.StartedAt, TerminatedAt: s.TerminatedAt,
		Position: s.Position, Kernels: make([]kernelView, len(s.Kernels)), LastUsedAt: s.LastUsedAt,
	}
	for i, d := range s.Devices {
		v.Devices[i] = deviceView{KernelID: d.KernelID, AgentID: d.AgentID, DeviceID: d.DeviceID, Amount: d.Amount}
	}
	for i, k := range s.Kernels {
		kv := kernelView{
			ID: k.ID, Index: k.Index, Role: k.Role, AgentID: k.AgentID, ContainerID: k.ContainerID,
			Status: k.Status, StatusReason: k.StatusReason, StatusMessage: k.StatusMessage, ExitCode: k.ExitCode,
			RequestedSlots: nonNilSlots(k.RequestedSlots), Devices: make([]kernelDeviceView, len(k.Devices)),
			ServicePorts: viewServicePorts(k),
		}
		if p := k.PullProgress; p != nil {
			kv.PullProgress = &pullProgressView{PullProgress: *p, Percent: p.Percent()}
		}
		for j, d := range k.Devices {
			kv.Devices[j] = kernelDeviceView{DeviceID: d.DeviceID, Amount: d.Amount.String()}
		}
		v.Kernels[i] = kv
	}
	return v
}

// mainKernel returns the session's main kernel (the first one when none
// is marked main).
func mainKernel(s sessions.Session) (sessions.Kernel, bool) {
	for _, k := range s.Kernels {
		if k.Role == domain.KernelMain {
			return k, true
		}
	}
	if len(s.Kernels) > 0 {
		return s.Kernels[0], true
	}
	return sessions.Kernel{}, false
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilSlots(s domain.Slots) domain.Slots {
	if s == nil {
		return domain.Slots{}
	}
	return s
}
