package domain

import (
	"errors"
	"testing"

	"github.com/google/uuid"
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

// TestAgentAllocateEachGivesBackARefusedSession: a session refused on its
// second kernel counts nothing of its first against the sessions after it
// (slots or device shares).
func TestAgentAllocateEachGivesBackARefusedSession(t *testing.T) {
	a := mustAgent(t, []Event{registeredEvent()})
	kernelC := uuid.MustParse("00000000-0000-4000-8000-00000000000c")
	req := func(kernel uuid.UUID, cpu int64, device, amount string) AllocationRequest {
		return AllocationRequest{KernelID: kernel, SessionID: sessionID, Slots: shares(cpu, amount), Devices: share(device, amount)}
	}
	events, errs := a.AllocateEach([][]AllocationRequest{
		{req(kernelA, 2, "GPU-0", "0.6")},
		{req(kernelB, 3, "GPU-1", "0.5"), req(otherID, 1, "GPU-0", "0.6")}, // GPU-0 has 0.4 left: refused
		{req(kernelC, 6, "GPU-1", "1")},                                    // fits only if B gave back 3 cpus and GPU-1
	}, at(2))
	if errs[0] != nil || !errors.Is(errs[1], ErrQuotaExceeded) || errs[2] != nil {
		t.Fatalf("errs = %v", errs)
	}
	checkEvents(t, events, []Event{
		allocated("A", shares(2, "0.6"), share("GPU-0", "0.6"), 2),
		AgentAllocated{KernelID: kernelC, SessionID: sessionID, Slots: shares(6, "1"), Devices: share("GPU-1", "1"), At: at(2)},
	})
}
