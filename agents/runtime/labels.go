package runtime

import "strings"

// Labels Cairn puts on every container it creates. They are how an agent
// recognises its kernels after a restart, so their names are part of the
// on-node contract and never change.
const (
	LabelKernel  = "cairn.kernel"
	LabelSession = "cairn.session"
	LabelAgent   = "cairn.agent"
	LabelManaged = "cairn.managed"

	// ManagedValue is the value of LabelManaged on Cairn's containers.
	ManagedValue = "true"

	// ReservedLabelPrefix starts every label Cairn sets itself; a spec's
	// extra labels may not use it.
	ReservedLabelPrefix = "cairn."

	// namePrefix starts the deterministic container name of a kernel.
	namePrefix = "cairn-"
)

// ContainerName is the deterministic name of a kernel's container. Because
// a runtime refuses to give one name to two containers, it is what makes
// Ensure create at most one container per kernel id, across processes too.
func ContainerName(kernelID string) string { return namePrefix + kernelID }

// IsReservedLabel reports whether key is one of the labels Cairn sets
// itself (the cairn.* namespace).
func IsReservedLabel(key string) bool { return strings.HasPrefix(key, ReservedLabelPrefix) }

// ManagedLabels returns the labels that identify a kernel's container.
func (s ContainerSpec) ManagedLabels() map[string]string {
	return map[string]string{
		LabelKernel:  s.KernelID,
		LabelSession: s.SessionID,
		LabelAgent:   s.AgentID,
		LabelManaged: ManagedValue,
	}
}

// AllLabels returns the spec's extra labels merged with the managed ones;
// the managed ones win.
func (s ContainerSpec) AllLabels() map[string]string {
	out := make(map[string]string, len(s.Labels)+4)
	for k, v := range s.Labels {
		out[k] = v
	}
	for k, v := range s.ManagedLabels() {
		out[k] = v
	}
	return out
}
