package commands_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/google/uuid"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// stepClock returns t0, t0+1s, t0+2s, ... one step per call, from any
// goroutine.
func stepClock() func() time.Time {
	var n atomic.Int64
	return func() time.Time { return t0.Add(time.Duration(n.Add(1)-1) * time.Second) }
}

// openStore opens the real SQLite store on a fresh file.
func openStore(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), sqlite.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// env is a store with handlers over it.
type env struct {
	store    *sqlite.Store
	handlers *commands.Handlers
	md       commands.Metadata
}

func newEnv(t testing.TB) *env {
	t.Helper()
	store := openStore(t)
	h, err := commands.NewHandlers(store, stepClock(), commands.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &env{store: store, handlers: h, md: commands.Metadata{Actor: "u1", AccessKey: "AKIA1", RequestID: "req-1", ClientIP: "10.0.0.1"}}
}

var ctx = context.Background()

func q(s string) domain.Quantity {
	v, err := domain.ParseQuantity(s, domain.SlotCount)
	if err != nil {
		panic(err)
	}
	return v
}

func gib(n int64) domain.Quantity { return domain.Units(n << 30) }

func agentSpec(id string, cpus int64) domain.AgentSpec {
	return domain.AgentSpec{
		ID: id, Architecture: "x86_64",
		Capacity: domain.Slots{domain.SlotCPU: domain.Units(cpus), domain.SlotMem: gib(64), domain.SlotCUDADevice: domain.Units(2), domain.SlotCUDAShares: domain.Units(2)},
		Devices: []domain.Device{
			{ID: "GPU-0", Kind: domain.SlotCUDADevice, Model: "H100", Memory: 80 << 30},
			{ID: "GPU-1", Kind: domain.SlotCUDADevice, Model: "H100", Memory: 80 << 30},
		},
	}
}

// sessionSpec is a batch session asking 1 cpu, 1 GiB and the given GPU
// shares per kernel ("" for none).
func sessionSpec(shares string) domain.SessionSpec {
	slots := domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: gib(1)}
	if shares != "" {
		slots[domain.SlotCUDAShares] = q(shares)
	}
	return domain.SessionSpec{
		Name: "train", Owner: domain.Owner{UserID: "u1", AccessKey: "AKIA1"},
		Domain: "default", Project: "ml", ResourceGroup: "gpu",
		Type: domain.SessionBatch, Image: "cr.io/pytorch:2.4", Command: "python train.py",
		Resources: slots,
	}
}

func (e *env) registerAgent(t testing.TB, spec domain.AgentSpec) {
	t.Helper()
	if _, err := e.handlers.RegisterAgent.Handle(ctx, e.md, commands.RegisterAgent{Spec: spec}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) requestSession(t testing.TB, spec domain.SessionSpec) commands.RequestSessionResult {
	t.Helper()
	res, err := e.handlers.RequestSession.Handle(ctx, e.md, commands.RequestSession{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// placeOn places every kernel of a session on agent, each on its own
// device share.
func placeOn(agent string, kernels []uuid.UUID, device, amount string) []domain.KernelPlacement {
	out := make([]domain.KernelPlacement, len(kernels))
	for i, k := range kernels {
		out[i] = domain.KernelPlacement{KernelID: k, AgentID: agent}
		if device != "" {
			out[i].Devices = []domain.DeviceShare{{DeviceID: device, Amount: q(amount)}}
		}
	}
	return out
}

func (e *env) schedule(t testing.TB, res commands.RequestSessionResult, agent, device, amount string) {
	t.Helper()
	_, err := e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{SessionID: res.SessionID, Kernels: placeOn(agent, res.KernelIDs, device, amount)})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) report(t testing.TB, r commands.ReportKernelStatus) commands.Result {
	t.Helper()
	out, err := e.handlers.ReportKernelStatus.Handle(ctx, e.md, r)
	if err != nil {
		t.Fatalf("report %s: %v", r.Phase, err)
	}
	return out
}

func (e *env) read(t testing.TB, stream string) []eventstore.RecordedEvent {
	t.Helper()
	evs, err := e.store.ReadStream(ctx, stream, eventstore.ReadStreamOptions{})
	if err != nil && !errors.Is(err, eventstore.ErrStreamNotFound) {
		t.Fatal(err)
	}
	return evs
}

func (e *env) types(t testing.TB, stream string) []string {
	t.Helper()
	var out []string
	for _, ev := range e.read(t, stream) {
		out = append(out, ev.Type)
	}
	return out
}

func (e *env) session(t testing.TB, id uuid.UUID) *domain.Session {
	t.Helper()
	s, err := domain.RehydrateSession(decode(t, e.read(t, domain.SessionStream(id).String())))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (e *env) agent(t testing.TB, id string) *domain.Agent {
	t.Helper()
	a, err := domain.RehydrateAgent(decode(t, e.read(t, domain.AgentStream(id).String())))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func decode(t testing.TB, evs []eventstore.RecordedEvent) []domain.RecordedEvent {
	t.Helper()
	out := make([]domain.RecordedEvent, len(evs))
	for i, ev := range evs {
		d, err := domain.DecodeEvent(ev.Type, ev.Version, ev.Data)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = domain.RecordedEvent{Revision: ev.Revision, Event: d}
	}
	return out
}

// lastPosition is the position of a stream's last event.
func (e *env) lastPosition(t testing.TB, stream string) uint64 {
	t.Helper()
	evs := e.read(t, stream)
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Position
}

func wantTypes(t testing.TB, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("event types:\n got %v\nwant %v", got, want)
	}
}

func wantKind(t testing.TB, err error, kind domain.Kind) {
	t.Helper()
	if err == nil || domain.KindOf(err) != kind {
		t.Fatalf("err = %v, want kind %v", err, kind)
	}
}

// unknownID names no session.
var unknownID = uuid.MustParse("0195a0c0-0000-7000-8000-0000000000ff")
