package domain

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
)

// maxAgentIDLength keeps "agent-<id>" within the event store's stream
// name limit.
const maxAgentIDLength = 200

// AgentSpec is what an agent announces when it registers.
type AgentSpec struct {
	// ID names the agent (e.g. its host name); stable across restarts.
	ID string
	// Architecture is the CPU architecture images must match (x86_64, aarch64).
	Architecture string
	// Capacity is every slot the agent offers, cpu and mem included.
	Capacity Slots
	// Devices are its accelerators: whole GPUs and MIG devices.
	Devices []Device
	// SealKey is the agent's public key that messages to it are sealed to
	// (an X25519 key in NATS nkey form, X...); empty for an agent that
	// announced none (only possible in process: the bus protocol requires
	// one, and the manager sends nothing to an agent without one).
	SealKey string
}

// Register records an agent's announcement. A first registration creates
// the agent (alive). Registering again is idempotent: the same spec from an
// alive agent returns no events; a changed spec records the new capacity
// and devices (even below what is allocated: the node is what it says, and
// allocations fit again as they are released); a lost agent rejoins; a
// disconnected agent reconnects (its allocations were kept).
// Every problem of the spec is reported at once (errors.Join).
func (a *Agent) Register(spec AgentSpec, at time.Time) ([]Event, error) {
	const op = "agent.register"
	spec, err := spec.normalized(op)
	if err != nil {
		return nil, err
	}
	if at.IsZero() {
		return nil, Invalid(op, "at", "must be set")
	}
	registered := AgentRegistered{AgentID: spec.ID, Architecture: spec.Architecture, Capacity: spec.Capacity, Devices: spec.Devices, SealKey: spec.SealKey, At: at}
	if !a.exists {
		return []Event{registered}, nil
	}
	if spec.ID != a.id {
		return nil, Invalid(op, "id", "agent %s cannot register as %s", a.id, spec.ID)
	}
	var events []Event
	switch a.status {
	case AgentStatusLost:
		events = append(events, AgentRejoined{At: at})
	case AgentStatusDisconnected:
		events = append(events, AgentReconnected{At: at})
	}
	if spec.Architecture != a.architecture || !sameSlots(spec.Capacity, a.capacity) || !slices.Equal(spec.Devices, a.devices) || spec.SealKey != a.sealKey {
		events = append(events, registered)
	}
	return events, nil
}

// MarkLost records that the agent stopped answering: every allocation
// still on it is released (the sessions holding them must be put in ERROR
// first, see commands.MarkAgentLost) and the agent is lost. An agent
// already lost with nothing allocated returns no events.
func (a *Agent) MarkLost(reason string, at time.Time) ([]Event, error) {
	const op = "agent.mark-lost"
	switch {
	case !a.exists:
		return nil, a.notFound(op)
	case reason == "":
		return nil, Invalid(op, "reason", "required")
	case at.IsZero():
		return nil, Invalid(op, "at", "must be set")
	}
	var events []Event
	for _, al := range a.Allocations() {
		events = append(events, AgentReleased{KernelID: al.KernelID, SessionID: al.SessionID, Reason: reason, At: at})
	}
	if a.status != AgentStatusLost {
		events = append(events, AgentLost{Reason: reason, At: at})
	}
	return events, nil
}

// normalized validates the spec and returns it with zero slots dropped and
// devices sorted by id.
func (spec AgentSpec) normalized(op string) (AgentSpec, error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, Invalid(op, field, format, args...))
	}
	switch {
	case spec.ID == "":
		bad("id", "required")
	case len(spec.ID) > maxAgentIDLength:
		bad("id", "longer than %d bytes", maxAgentIDLength)
	case strings.IndexFunc(spec.ID, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		bad("id", "must not contain spaces or control characters")
	}
	if strings.TrimSpace(spec.Architecture) == "" {
		bad("architecture", "required")
	}
	capacity := make(Slots, len(spec.Capacity))
	for _, name := range spec.Capacity.Names() {
		v := spec.Capacity[name]
		t, known := SlotTypeOf(name)
		switch {
		case !known:
			bad("capacity."+string(name), "unknown resource slot")
		case v < 0:
			bad("capacity."+string(name), "must not be negative")
		case t == SlotBytes && !v.IsWhole():
			bad("capacity."+string(name), "must be a whole number of bytes")
		case v > 0:
			capacity[name] = v
		}
	}
	for _, name := range []SlotName{SlotCPU, SlotMem} {
		if capacity[name] == 0 && spec.Capacity[name] >= 0 { // negatives are reported above
			bad("capacity."+string(name), "required and must be positive")
		}
	}
	if spec.SealKey != "" && !isSealKey(spec.SealKey) {
		bad("seal_key", "not a public curve key (56 characters of base32 beginning with X)")
	}
	devices := append([]Device(nil), spec.Devices...)
	sort.Slice(devices, func(i, j int) bool { return devices[i].ID < devices[j].ID })
	for i, d := range devices {
		switch {
		case d.ID == "":
			bad("devices.id", "a device id is empty")
		case i > 0 && devices[i-1].ID == d.ID:
			bad("devices.id", "device %s listed twice", d.ID)
		case !IsAccelerator(d.Kind) || d.Kind == SlotCUDAShares:
			bad("devices.kind", "device %s: %q is not a device slot (cuda.device, a MIG profile, ...)", d.ID, d.Kind)
		case d.Memory < 0:
			bad("devices.memory", "device %s: must not be negative", d.ID)
		}
	}
	if len(devices) == 0 {
		devices = nil
	}
	spec.Capacity, spec.Devices = capacity, devices
	if len(errs) == 1 {
		return spec, errs[0]
	}
	return spec, errors.Join(errs...)
}

// sameSlots compares amounts slot by slot, a missing slot being zero.
func sameSlots(a, b Slots) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// isSealKey: a public curve nkey as it is printed, 56 characters of
// base32 beginning with X (the library that checks its checksum is the
// bus's; the domain only keeps it).
func isSealKey(k string) bool {
	if len(k) != 56 || k[0] != 'X' {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; (c < 'A' || c > 'Z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}
