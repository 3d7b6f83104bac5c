package commandapi_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

var testMD = commands.Metadata{Actor: "scheduler", RequestID: "test"}

// registerAgent announces agent id with 8 CPUs, 64 GiB and two GPUs, as
// the agent does at start; it returns the position.
func (e *env) registerAgent(t *testing.T, id string) uint64 {
	t.Helper()
	res, err := e.handlers.RegisterAgent.Handle(context.Background(), testMD, commands.RegisterAgent{Spec: domain.AgentSpec{
		ID: id, Architecture: "x86_64",
		Capacity: domain.Slots{
			domain.SlotCPU: domain.Units(8), domain.SlotMem: domain.Units(64 << 30),
			domain.SlotCUDADevice: domain.Units(2), domain.SlotCUDAShares: domain.Units(2),
		},
		Devices: []domain.Device{
			{ID: "GPU-0", Kind: domain.SlotCUDADevice, Model: "H100", Memory: 80 << 30},
			{ID: "GPU-1", Kind: domain.SlotCUDADevice, Model: "H100", Memory: 80 << 30},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Position
}

// schedule places every kernel of a session on agent, each with the given
// share of GPU-0 ("" for none), as the scheduler does; it returns the
// position.
func (e *env) schedule(t *testing.T, c created, agent, share string) uint64 {
	t.Helper()
	cmd := commands.ScheduleSession{SessionID: uuid.MustParse(c.ID)}
	for _, k := range c.KernelIDs {
		p := domain.KernelPlacement{KernelID: uuid.MustParse(k), AgentID: agent}
		if share != "" {
			q, err := domain.ParseQuantity(share, domain.SlotCount)
			if err != nil {
				t.Fatal(err)
			}
			p.Devices = []domain.DeviceShare{{DeviceID: "GPU-0", Amount: q}}
		}
		cmd.Kernels = append(cmd.Kernels, p)
	}
	res, err := e.handlers.ScheduleSession.Handle(context.Background(), testMD, cmd)
	if err != nil {
		t.Fatal(err)
	}
	return res.Position
}
