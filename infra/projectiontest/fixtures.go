package projectiontest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// T0 is the fixtures' first clock reading.
var T0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// StepClock returns T0, T0+1s, T0+2s, ..., one step per call, from any
// goroutine.
func StepClock() func() time.Time {
	var n atomic.Int64
	return func() time.Time { return T0.Add(time.Duration(n.Add(1)-1) * time.Second) }
}

// Handlers returns command handlers over the backend's store.
func Handlers(t testing.TB, b *Backend) *commands.Handlers {
	t.Helper()
	h, err := commands.NewHandlers(b.Store, StepClock(), commands.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// MD is the metadata of the fixtures' commands.
var MD = commands.Metadata{Actor: "u1", AccessKey: "AKIA1", RequestID: "req-1"}

// GiB returns n GiB as a Quantity of bytes.
func GiB(n int64) domain.Quantity { return domain.Units(n << 30) }

// Qty parses a count ("0.5").
func Qty(s string) domain.Quantity {
	q, err := domain.ParseQuantity(s, domain.SlotCount)
	if err != nil {
		panic(err)
	}
	return q
}

// AgentSpec is an x86_64 agent with cpus CPUs, 64 GiB and two H100s.
func AgentSpec(id string, cpus int64) domain.AgentSpec {
	return domain.AgentSpec{
		ID: id, Architecture: "x86_64",
		Capacity: domain.Slots{domain.SlotCPU: domain.Units(cpus), domain.SlotMem: GiB(64), domain.SlotCUDADevice: domain.Units(2), domain.SlotCUDAShares: domain.Units(2)},
		Devices: []domain.Device{
			{ID: "GPU-0", Kind: domain.SlotCUDADevice, Model: "H100", Memory: 80 << 30},
			{ID: "GPU-1", Kind: domain.SlotCUDADevice, Model: "H100", Memory: 80 << 30},
		},
	}
}

// SessionSpec is a batch session of owner asking, per kernel, 1 CPU, 1 GiB
// and the given CUDA shares ("" for none).
func SessionSpec(owner, shares string, size int) domain.SessionSpec {
	slots := domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: GiB(1)}
	if shares != "" {
		slots[domain.SlotCUDAShares] = Qty(shares)
	}
	return domain.SessionSpec{
		Name: "train", Owner: domain.Owner{UserID: owner, AccessKey: "AK-" + owner},
		Domain: "default", Project: "ml", ResourceGroup: "gpu",
		Type: domain.SessionBatch, Image: "cr.io/pytorch:2.4", Command: "python train.py",
		ClusterSize: size, Resources: slots,
	}
}

// Events returns the store's events up to position upTo (which must
// exist), read through a subscription: on PostgreSQL a plain ReadAll may
// stop short while a transaction is open somewhere.
func Events(t testing.TB, s eventstore.Store, upTo uint64) []eventstore.RecordedEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	sub, err := s.Subscribe(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var out []eventstore.RecordedEvent
	for len(out) == 0 || out[len(out)-1].Position < upTo {
		m, ok := <-sub.Messages()
		if !ok {
			t.Fatalf("subscription ended before position %d: %v", upTo, sub.Err())
		}
		if !m.CaughtUp {
			out = append(out, m.Event)
		}
	}
	return out
}

// Place puts every kernel on agent, each on the given device share
// (device "" for none).
func Place(agent string, kernels []uuid.UUID, device, amount string) []domain.KernelPlacement {
	out := make([]domain.KernelPlacement, len(kernels))
	for i, k := range kernels {
		out[i] = domain.KernelPlacement{KernelID: k, AgentID: agent}
		if device != "" {
			out[i].Devices = []domain.DeviceShare{{DeviceID: device, Amount: Qty(amount)}}
		}
	}
	return out
}
