package domain

import (
	"errors"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
)

// Request limits.
const (
	// DefaultPriority is a session's priority when the request names none.
	DefaultPriority = 10
	// MaxPriority is the highest priority (0 is the lowest).
	MaxPriority = 100
	// MaxClusterSize bounds the kernels of one session whatever the
	// policies say (max_containers_per_session is checked by the scheduler).
	MaxClusterSize = 256
	// MaxDependencies bounds the sessions one session may wait for.
	MaxDependencies = 64
	maxNameLength   = 64
	maxImageLength  = 512
)

// SessionSpec is what a user asks for. Resources are per kernel.
type SessionSpec struct {
	Name          string
	Owner         Owner
	Domain        string
	Project       string
	ResourceGroup string
	Type          SessionType
	Image         string
	// Command is the startup command; required for batch sessions.
	Command string
	Env     map[string]string
	// Priority is 0..100; nil means DefaultPriority.
	Priority *int
	// ClusterMode defaults to single-node.
	ClusterMode ClusterMode
	// ClusterSize is the number of kernels; 0 means 1.
	ClusterSize int
	Resources   Slots
	// StartsAt, when set, is the earliest time the session may start.
	StartsAt time.Time
	// Dependencies are sessions that must finish successfully before this
	// one starts (at most MaxDependencies, none twice).
	Dependencies []uuid.UUID
	// Architecture is the CPU architecture the session needs (x86_64,
	// aarch64); empty accepts any agent.
	Architecture string
	// Mounts are the virtual folders to mount, already resolved and
	// authorized (VFolder.MountBy); their paths must not overlap.
	Mounts []VFolderMount
	// PreopenPorts are container ports to publish besides the image's
	// service ports (at most MaxPreopenPorts, none twice), each an HTTP
	// app named port-<n>.
	PreopenPorts []int
}

// SessionRequest is the request-session command: the spec plus the ids and
// time its caller assigned (the domain makes up neither).
type SessionRequest struct {
	ID uuid.UUID
	// KernelIDs has one id per kernel (ClusterSize of them), main first.
	KernelIDs []uuid.UUID
	Spec      SessionSpec
	At        time.Time
}

// RequestSession validates a request and returns the session.requested
// event that creates the session in PENDING. Every problem is reported at
// once: a single *Error (KindInvalid, naming the field) or several joined
// with errors.Join (errors.Is(err, ErrInvalid) holds either way).
func RequestSession(req SessionRequest) ([]Event, error) {
	const op = "session.request"
	spec := req.Spec
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, Invalid(op, field, format, args...))
	}

	if req.ID == uuid.Nil {
		bad("id", "must be set")
	}
	if req.At.IsZero() {
		bad("at", "must be set")
	}
	checkName(spec.Name, bad)
	if spec.Owner.UserID == "" {
		bad("owner.user_id", "required")
	}
	if spec.Owner.AccessKey == "" {
		bad("owner.access_key", "required")
	}
	for _, f := range []struct{ field, value string }{
		{"domain", spec.Domain}, {"project", spec.Project}, {"resource_group", spec.ResourceGroup},
	} {
		if strings.TrimSpace(f.value) == "" {
			bad(f.field, "required")
		}
	}
	switch spec.Type {
	case SessionInteractive, SessionBatch:
	default:
		bad("type", "unknown session type %q (interactive, batch)", spec.Type)
	}
	switch {
	case spec.Image == "":
		bad("image", "required")
	case len(spec.Image) > maxImageLength:
		bad("image", "longer than %d bytes", maxImageLength)
	case strings.IndexFunc(spec.Image, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		bad("image", "must not contain spaces or control characters")
	}
	if spec.Type == SessionBatch && strings.TrimSpace(spec.Command) == "" {
		bad("command", "required for batch sessions")
	}
	if strings.IndexByte(spec.Command, 0) >= 0 {
		bad("command", "must not contain NUL")
	}
	checkEnv(spec.Env, bad)

	priority := DefaultPriority
	if spec.Priority != nil {
		priority = *spec.Priority
		if priority < 0 || priority > MaxPriority {
			bad("priority", "must be between 0 and %d, not %d", MaxPriority, priority)
		}
	}
	mode := spec.ClusterMode
	switch mode {
	case "":
		mode = ClusterSingleNode
	case ClusterSingleNode, ClusterMultiNode:
	default:
		bad("cluster_mode", "unknown cluster mode %q (single-node, multi-node)", mode)
	}
	size := spec.ClusterSize
	if size == 0 {
		size = 1
	}
	if size < 1 || size > MaxClusterSize {
		bad("cluster_size", "must be between 1 and %d, not %d", MaxClusterSize, spec.ClusterSize)
	} else {
		checkKernelIDs(req.KernelIDs, size, bad)
	}
	checkDependencies(req.ID, spec.Dependencies, bad)
	if strings.IndexFunc(spec.Architecture, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		bad("architecture", "must not contain spaces or control characters")
	}
	resources, resErrs := validateResources(op, spec.Resources)
	errs = append(errs, resErrs...)
	if err := CheckMountPaths(op, spec.Mounts); err != nil {
		errs = append(errs, err)
	}
	checkPreopenPorts(spec.PreopenPorts, bad)

	if len(errs) == 1 {
		return nil, errs[0]
	}
	if len(errs) > 1 {
		return nil, errors.Join(errs...)
	}

	kernels := make([]KernelSpec, size)
	for i := range kernels {
		role := KernelSub
		if i == 0 {
			role = KernelMain
		}
		kernels[i] = KernelSpec{KernelID: req.KernelIDs[i], Role: role, Slots: resources.Clone()}
	}
	var env map[string]string
	if len(spec.Env) > 0 {
		env = make(map[string]string, len(spec.Env))
		for k, v := range spec.Env {
			env[k] = v
		}
	}
	return []Event{SessionRequested{
		SessionID:     req.ID,
		Name:          spec.Name,
		Owner:         spec.Owner,
		Domain:        spec.Domain,
		Project:       spec.Project,
		ResourceGroup: spec.ResourceGroup,
		Type:          spec.Type,
		Image:         spec.Image,
		Command:       spec.Command,
		Env:           env,
		Priority:      priority,
		ClusterMode:   mode,
		Kernels:       kernels,
		Mounts:        slices.Clone(spec.Mounts),
		At:            req.At,
		StartsAt:      spec.StartsAt.UTC(),
		Dependencies:  slices.Clone(spec.Dependencies),
		Architecture:  spec.Architecture,
		PreopenPorts:  slices.Clone(spec.PreopenPorts),
	}}, nil
}

// checkName: 1 to 64 characters, letters, digits, '.', '_' and '-',
// starting with a letter or digit.
func checkName(name string, bad func(field, format string, args ...any)) {
	checkNameField("name", name, bad)
}

// checkNameField applies checkName's rules to the input field named field.
func checkNameField(field, name string, bad func(field, format string, args ...any)) {
	if name == "" {
		bad(field, "required")
		return
	}
	if len(name) > maxNameLength {
		bad(field, "longer than %d characters", maxNameLength)
		return
	}
	for i, r := range name {
		alnum := r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))
		if i == 0 && !alnum {
			bad(field, "must start with a letter or a digit")
			return
		}
		if !alnum && r != '.' && r != '_' && r != '-' {
			bad(field, "may only contain letters, digits, '.', '_' and '-'")
			return
		}
	}
}

func checkEnv(env map[string]string, bad func(field, format string, args ...any)) {
	for k, v := range env {
		switch {
		case k == "":
			bad("env", "a variable name is empty")
		case strings.ContainsAny(k, "=\x00"):
			bad("env."+k, "a variable name must not contain '=' or NUL")
		case strings.IndexByte(v, 0) >= 0:
			bad("env."+k, "the value must not contain NUL")
		}
	}
}

func checkDependencies(self uuid.UUID, deps []uuid.UUID, bad func(field, format string, args ...any)) {
	if len(deps) > MaxDependencies {
		bad("dependencies", "more than %d", MaxDependencies)
		return
	}
	seen := make(map[uuid.UUID]bool, len(deps))
	for _, id := range deps {
		switch {
		case id == uuid.Nil:
			bad("dependencies", "an id is not set")
		case id == self:
			bad("dependencies", "a session cannot depend on itself")
		case seen[id]:
			bad("dependencies", "%s appears twice", id)
		default:
			seen[id] = true
			continue
		}
		return
	}
}

func checkKernelIDs(ids []uuid.UUID, size int, bad func(field, format string, args ...any)) {
	if len(ids) != size {
		bad("kernel_ids", "%d ids for %d kernels", len(ids), size)
		return
	}
	seen := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		if id == uuid.Nil {
			bad("kernel_ids", "an id is not set")
			return
		}
		if seen[id] {
			bad("kernel_ids", "id %s appears twice", id)
			return
		}
		seen[id] = true
	}
}
