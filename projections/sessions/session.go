package sessions

import (
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// Session is one session as the read model shows it.
type Session struct {
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

	Status        domain.SessionStatus `json:"status"`
	StatusReason  string               `json:"status_reason,omitempty"`
	StatusMessage string               `json:"status_message,omitempty"`
	// PendingDetails lists why the scheduler could not place the session
	// yet; PendingTries counts its attempts.
	PendingDetails []string `json:"pending_details,omitempty"`
	PendingTries   int      `json:"pending_tries,omitempty"`

	// AgentIDs are the agents the kernels run on, sorted; Devices the
	// device shares they hold.
	AgentIDs []string           `json:"agent_ids"`
	Devices  []DeviceAssignment `json:"devices"`
	// RequestedSlots is the sum of the kernels' requested slots.
	RequestedSlots domain.Slots `json:"requested_slots"`

	Result   domain.SessionResult `json:"result,omitempty"`
	ExitCode *int                 `json:"exit_code,omitempty"`

	CreatedAt    time.Time  `json:"created_at"`
	ScheduledAt  *time.Time `json:"scheduled_at,omitempty"`
	StartedAt    *time.Time `json:"started_at,omitempty"`
	TerminatedAt *time.Time `json:"terminated_at,omitempty"`
	// LastUsedAt is the latest successful access record about the session
	// (an API request, app traffic, an agent's kernel.activity): what its
	// idle limit counts from, when later than StartedAt.
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`

	// Position is the log position of the last event of the session that
	// the row reflects.
	Position uint64 `json:"position"`

	// Kernels, main first.
	Kernels []Kernel `json:"kernels"`

	// createdPosition orders listings and makes their cursors.
	createdPosition uint64
}

// Kernel is one kernel of a session.
type Kernel struct {
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
	// Devices are the device shares the kernel holds, by device id.
	Devices []domain.DeviceShare `json:"devices"`
	// ServicePorts are the ports the kernel's agent published for its apps
	// when it started (empty before, and for a kernel without apps).
	ServicePorts []domain.PublishedPort `json:"service_ports"`
	// PullProgress is the latest progress of the kernel's image pull (nil
	// when none was reported).
	PullProgress *domain.PullProgress `json:"pull_progress,omitempty"`
	// AppsReady are the apps (by service port name) that answered the
	// agent's probe, sorted by name.
	AppsReady []domain.AppReady `json:"apps_ready"`
	Position  uint64            `json:"position"`
}

// DeviceAssignment is one device share a session's kernel holds.
type DeviceAssignment struct {
	KernelID uuid.UUID `json:"kernel_id"`
	AgentID  string    `json:"agent_id"`
	DeviceID string    `json:"device_id"`
	// Amount is the share of the device, as a decimal ("1", "0.5").
	Amount string `json:"amount"`
}
