package scheduler_test

import (
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/managertest"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func q(s string) domain.Quantity {
	v, err := domain.ParseQuantity(s, domain.SlotCount)
	if err != nil {
		panic(err)
	}
	return v
}

func gib(n int64) domain.Quantity { return domain.Units(n << 30) }

func cpuMem(cpu int64, mem int64) domain.Slots {
	return domain.Slots{domain.SlotCPU: domain.Units(cpu), domain.SlotMem: gib(mem)}
}

func with(s domain.Slots, name domain.SlotName, v domain.Quantity) domain.Slots {
	s = s.Clone()
	s[name] = v
	return s
}

func share(device, amount string) domain.DeviceShare {
	return domain.DeviceShare{DeviceID: device, Amount: q(amount)}
}

// env is the real store and handlers (managertest) plus a scheduler.
type env struct {
	*managertest.Env
}

func newEnv(t *testing.T) *env { return &env{managertest.New(t)} }

// start runs a scheduler until the returned stop function is called (or
// the test ends); stop waits for Run to return and checks it returned nil.
func (e *env) start(cfg scheduler.Config) (stop func()) {
	e.T.Helper()
	cfg.Clock, cfg.Logger = e.Clock.Now, e.Log
	if cfg.Interval == 0 {
		cfg.Interval = 20 * time.Millisecond
	}
	s, err := scheduler.New(cfg, e.Store, scheduler.CommandsOf(e.Handlers))
	if err != nil {
		e.T.Fatal(err)
	}
	return managertest.Go(e.T, "scheduler", s.Run)
}

// request asks for a batch session of size kernels with slots each.
func (e *env) request(slots domain.Slots, size int, mode domain.ClusterMode) commands.RequestSessionResult {
	e.T.Helper()
	return e.Request(domain.SessionSpec{
		Name: "train", Owner: domain.Owner{UserID: "u1", AccessKey: "AKIA1"},
		Domain: "default", Project: "ml", ResourceGroup: "default",
		Type: domain.SessionBatch, Image: "cr.io/pytorch:2.4", Command: "python train.py",
		ClusterSize: size, ClusterMode: mode, Resources: slots,
	})
}

func agentSpec(id string, cpus, memGiB int64, gpus int) domain.AgentSpec {
	spec := domain.AgentSpec{ID: id, Architecture: "x86_64", Capacity: cpuMem(cpus, memGiB)}
	if gpus > 0 {
		spec.Capacity[domain.SlotCUDADevice] = domain.Units(int64(gpus))
		spec.Capacity[domain.SlotCUDAShares] = domain.Units(int64(gpus))
	}
	for i := range gpus {
		spec.Devices = append(spec.Devices, domain.Device{ID: id + "-GPU-" + string(rune('0'+i)), Kind: domain.SlotCUDADevice, Model: "H100"})
	}
	return spec
}
