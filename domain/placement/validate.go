package placement

import (
	"fmt"
	"strings"

	"github.com/cairnhq/cairn/domain"
)

// validate checks what placement relies on: a known cluster mode and
// priority, at least one kernel, known slots, no negative amount, at most
// one accelerator slot per kernel (cuda.device, cuda.shares and MIG
// profiles are mutually exclusive), cuda.shares in steps of 0.01, whole
// numbers of devices, a MIG profile exactly 1. It returns what is wrong,
// or "".
func validate(s *Session) string {
	switch s.ClusterMode {
	case "", domain.ClusterSingleNode, domain.ClusterMultiNode:
	default:
		return fmt.Sprintf("unknown cluster mode %q", s.ClusterMode)
	}
	if s.Priority < 0 || s.Priority > domain.MaxPriority {
		return fmt.Sprintf("priority %d is not between 0 and %d", s.Priority, domain.MaxPriority)
	}
	if len(s.Kernels) == 0 {
		return "no kernels"
	}
	for i, k := range s.Kernels {
		if msg := validateSlots(k.Slots); msg != "" {
			return fmt.Sprintf("kernel %d: %s", i, msg)
		}
	}
	return ""
}

// validateSlots returns the first problem of slots in name order, "" for
// none; the common case (no problem) takes no sorting.
func validateSlots(slots domain.Slots) string {
	accels, asks := 0, false
	for name, v := range slots {
		if slotProblem(name, v) != "" {
			return sortedProblem(slots)
		}
		if v > 0 {
			asks = true
			if domain.IsAccelerator(name) {
				accels++
			}
		}
	}
	if accels > 1 || !asks {
		return sortedProblem(slots)
	}
	return ""
}

func slotProblem(name domain.SlotName, v domain.Quantity) string {
	t, known := domain.SlotTypeOf(name)
	switch {
	case !known:
		return fmt.Sprintf("unknown slot %s", name)
	case v < 0:
		return fmt.Sprintf("%s: negative amount %s", name, v)
	case v == 0:
		return ""
	case name == domain.SlotCUDAShares && int64(v)%shareStep != 0:
		return fmt.Sprintf("%s: %s is not a multiple of 0.01", name, v)
	case t == domain.SlotUnique && v != domain.Units(1):
		return fmt.Sprintf("%s: a MIG profile takes exactly 1, not %s", name, v)
	case domain.IsAccelerator(name) && name != domain.SlotCUDAShares && !v.IsWhole():
		return fmt.Sprintf("%s: %s is not a whole number of devices", name, v)
	}
	return ""
}

func sortedProblem(slots domain.Slots) string {
	var accels []string
	asks := false
	for _, name := range slots.Names() {
		v := slots[name]
		if msg := slotProblem(name, v); msg != "" {
			return msg
		}
		if v > 0 {
			asks = true
			if domain.IsAccelerator(name) {
				accels = append(accels, string(name))
			}
		}
	}
	if len(accels) > 1 {
		return fmt.Sprintf("%s are mutually exclusive", strings.Join(accels, ", "))
	}
	if !asks {
		return "requests nothing"
	}
	return ""
}
