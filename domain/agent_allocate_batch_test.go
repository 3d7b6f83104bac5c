package domain

import (
	"errors"
	"testing"
)

// TestAgentAllocateEach: sessions are decided in order, each all or
// nothing, counting against the ones accepted before; a refused one takes
// nothing and does not stop the rest; the agent is left unchanged.
func TestAgentAllocateEach(t *testing.T) {
	a := mustAgent(t, []Event{registeredEvent()})
	req := func(kernel string, cpu int64, amount string) AllocationRequest {
		return AllocationRequest{KernelID: kernelFor(kernel), SessionID: sessionID, Slots: shares(cpu, amount), Devices: share("GPU-0", amount)}
	}
	events, errs := a.AllocateEach([][]AllocationRequest{
		{req("A", 2, "0.6")},
		{req("B", 2, "0.6")}, // GPU-0 has 0.4 left: refused
		{{KernelID: otherID, SessionID: sessionID, Slots: shares(2, "0.4"), Devices: share("GPU-0", "0.4")}},
	}, at(2))
	if errs[0] != nil || !errors.Is(errs[1], ErrQuotaExceeded) || errs[2] != nil {
		t.Fatalf("errs = %v", errs)
	}
	checkEvents(t, events, []Event{
		allocated("A", shares(2, "0.6"), share("GPU-0", "0.6"), 2),
		AgentAllocated{KernelID: otherID, SessionID: sessionID, Slots: shares(2, "0.4"), Devices: share("GPU-0", "0.4"), At: at(2)},
	})
	if got := a.DeviceFree("GPU-0"); got != q("1") {
		t.Fatalf("the agent changed: GPU-0 free %v", got)
	}
	// The events fold: one append holds them all.
	mustAgent(t, append([]Event{registeredEvent()}, events...))
}
