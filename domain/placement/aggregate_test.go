package placement_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/google/uuid"
)

// TestTheAgentAggregateAcceptsEveryPlacement replays every placement
// through the agent aggregate's own allocation rule (domain.Agent,
// AllocateKernels), which refuses any slot or device share beyond what is
// free and any device of the wrong kind or amount: what placement decides
// must be what the agents' streams accept.
func TestTheAgentAggregateAcceptsEveryPlacement(t *testing.T) {
	t.Parallel()
	for seed := range uint64(400) {
		in := randomInput(rand.New(rand.NewPCG(seed, 13)))
		r := place(t, in)
		streams := map[string][]domain.RecordedEvent{}
		for _, a := range in.Agents {
			streams[a.ID] = agentStream(a)
		}
		for _, p := range r.Placed {
			s := findSession(in, p.SessionID)
			byAgent := map[string][]domain.AllocationRequest{}
			for i, k := range p.Kernels {
				byAgent[k.AgentID] = append(byAgent[k.AgentID], domain.AllocationRequest{
					KernelID: k.KernelID, SessionID: p.SessionID, Slots: s.Kernels[i].Slots, Devices: k.Devices,
				})
			}
			for id, reqs := range byAgent {
				a, err := domain.RehydrateAgent(streams[id])
				if err != nil {
					t.Fatal(err)
				}
				evs, err := a.AllocateKernels(reqs, t0)
				if err != nil {
					t.Fatalf("seed %d: agent %s refuses session %s: %v", seed, id, p.SessionID, err)
				}
				for _, ev := range evs {
					streams[id] = append(streams[id], domain.RecordedEvent{Revision: int64(len(streams[id])), Event: ev})
				}
			}
		}
	}
}

// agentStream is the agent stream an Agent stands for: its registration,
// one allocation per used device (its share, or the whole device), and
// one for the rest of its occupancy.
func agentStream(a placement.Agent) []domain.RecordedEvent {
	reg := domain.AgentRegistered{AgentID: a.ID, Architecture: a.Architecture, Capacity: a.Capacity, At: t0}
	for _, d := range a.Devices {
		reg.Devices = append(reg.Devices, domain.Device{ID: d.ID, Kind: d.Kind})
	}
	evs := []domain.RecordedEvent{{Revision: 0, Event: reg}}
	if !a.Schedulable {
		evs = append(evs, domain.RecordedEvent{Revision: 1, Event: domain.AgentLost{Reason: domain.ReasonAgentLost, At: t0}})
	}
	rest := a.Occupied.Clone()
	for i, d := range a.Devices {
		if d.Used == 0 {
			continue
		}
		slot, amount := d.Kind, d.Used
		if d.Kind == domain.SlotCUDADevice {
			slot = domain.SlotCUDAShares
		} else {
			amount = domain.DeviceShareCapacity
		}
		rest[slot] -= amount
		evs = append(evs, domain.RecordedEvent{Revision: int64(len(evs)), Event: domain.AgentAllocated{
			KernelID: uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "%s/%d", a.ID, i)), SessionID: uuid.New(),
			Slots: domain.Slots{slot: amount}, Devices: []domain.DeviceShare{{DeviceID: d.ID, Amount: amount}}, At: t0,
		}})
	}
	for name, v := range rest {
		if v <= 0 {
			delete(rest, name)
		}
	}
	if len(rest) > 0 {
		evs = append(evs, domain.RecordedEvent{Revision: int64(len(evs)), Event: domain.AgentAllocated{
			KernelID: uuid.New(), SessionID: uuid.New(), Slots: rest, At: t0,
		}})
	}
	return evs
}
