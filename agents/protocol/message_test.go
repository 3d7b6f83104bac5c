package protocol_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus"
)

var (
	at      = time.Date(2026, 11, 21, 8, 0, 0, 123456789, time.UTC)
	kernel  = uuid.MustParse("0190f3a2-7c1e-7b3d-9a51-2f6c1d8e4b70")
	kernel2 = uuid.MustParse("0190f3a2-7c1e-7b3d-9a51-2f6c1d8e4b71")
	session = uuid.MustParse("0190f3a2-7c1e-7b3d-9a51-2f6c1d8e4b00")
)

// testSealKey is a public curve key (nkeys.CreateCurveKeys).
const testSealKey = "XAL54S5FE6SRPONXRNVE4ZDAOHOT44GFIY2ZW33DHLR2U3H2HJSXXRKY"

// One valid message of every type.
func samples() []protocol.Message {
	return []protocol.Message{
		protocol.AgentRegister{
			AgentID: "node-1", Architecture: "x86_64",
			Capacity: domain.Slots{domain.SlotCPU: domain.Units(8), domain.SlotMem: domain.Units(16 << 30), domain.SlotCUDADevice: domain.Units(1), domain.SlotCUDAShares: domain.Units(1)},
			Devices:  []domain.Device{{ID: "GPU-1", Kind: domain.SlotCUDADevice, Model: "H100", Memory: 80 << 30}},
			Kernels:  []uuid.UUID{kernel}, Address: "http://node-1:6001", Version: "v1.2.3",
			SealKey:   testSealKey,
			StartedAt: at.Add(-time.Minute), At: at,
		},
		protocol.AgentHeartbeat{AgentID: "node-1", Running: []uuid.UUID{kernel, kernel2}, IntervalMillis: 10_000, StartedAt: at.Add(-time.Minute), At: at},
		protocol.KernelStatus{SessionID: session, KernelID: kernel, AgentID: "node-1", Phase: domain.PhaseRunning, ContainerID: "abc123", ObservedAt: at},
		protocol.KernelStatus{SessionID: session, KernelID: kernel, AgentID: "node-1", Phase: domain.PhaseExited, ExitCode: 3, ObservedAt: at},
		protocol.KernelStatus{SessionID: session, KernelID: kernel, AgentID: "node-1", Phase: domain.PhasePulling, ObservedAt: at,
			Pull: &domain.PullProgress{LayersDone: 1, LayersTotal: 2, BytesDone: 10, BytesTotal: 20}},
		protocol.KernelStatus{SessionID: session, KernelID: kernel, AgentID: "node-1", Phase: domain.PhaseRunning, ContainerID: "abc123", ObservedAt: at,
			ServicePorts: []domain.PublishedPort{{Name: "web", Protocol: "http", ContainerPort: 8080, HostPort: 30000}}, ReadyApps: []string{"web"}},
		protocol.KernelStatus{SessionID: session, KernelID: kernel, AgentID: "node-1", Phase: domain.PhaseFailed, Reason: domain.ReasonFailedToStart, Message: "image not found", ObservedAt: at},
		protocol.KernelActivity{SessionID: session, KernelID: kernel, AgentID: "node-1", Signals: []string{protocol.SignalGPU, protocol.SignalNotebook, protocol.SignalTerminal}, ObservedAt: at},
		protocol.KernelCreate{
			KernelID: kernel, SessionID: session, AgentID: "node-1", Role: domain.KernelMain,
			Image: "localhost/cairn/base:latest", Command: []string{"sh", "-c", "echo hi"}, Env: map[string]string{"A": "1"},
			Slots:              domain.Slots{domain.SlotCPU: 500, domain.SlotMem: domain.Units(64 << 20), domain.SlotCUDAShares: 500},
			Devices:            []domain.DeviceShare{{DeviceID: "GPU-1", Amount: 500}},
			Mounts:             []protocol.Mount{{Source: "/data/a", Target: "/home/work/a", ReadOnly: true}},
			AllocationRevision: 7, At: at,
		},
		protocol.KernelDestroy{KernelID: kernel, SessionID: session, AgentID: "node-1", Reason: domain.ReasonUserRequested, At: at},
		protocol.KernelSync{AgentID: "node-1", Kernels: []uuid.UUID{kernel}, AsOfRevision: 9, At: at},
	}
}

// Every message survives encoding and decoding unchanged, with its type,
// version, agent and kernel in the metadata and a UUIDv7 id.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, m := range samples() {
		msg, err := protocol.NewMessage(m)
		if err != nil {
			t.Fatalf("%s: encode: %v", m.MessageType(), err)
		}
		id, err := uuid.Parse(msg.UUID)
		if err != nil || id.Version() != 7 {
			t.Errorf("%s: message id %q is not a UUIDv7", m.MessageType(), msg.UUID)
		}
		if got := msg.Metadata.Get(protocol.MetaType); got != m.MessageType() {
			t.Errorf("%s: metadata type %q", m.MessageType(), got)
		}
		if msg.Metadata.Get(protocol.MetaVersion) != "1" || msg.Metadata.Get(protocol.MetaAgent) != "node-1" {
			t.Errorf("%s: metadata %v", m.MessageType(), msg.Metadata)
		}
		_, aboutKernel := m.(interface{ Kernel() uuid.UUID })
		if got := msg.Metadata.Get(protocol.MetaKernel); aboutKernel != (got == kernel.String()) {
			t.Errorf("%s: metadata kernel %q", m.MessageType(), got)
		}
		got, err := protocol.Decode(msg)
		if err != nil {
			t.Fatalf("%s: decode: %v", m.MessageType(), err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%s: round trip\n got %#v\nwant %#v", m.MessageType(), got, m)
		}
	}
}

// The payload is the documented envelope with snake_case fields.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	id := uuid.MustParse("0190f3a2-0000-7000-8000-000000000001")
	msg, err := protocol.Encode(id, protocol.KernelStatus{SessionID: session, KernelID: kernel, AgentID: "node-1", Phase: domain.PhaseExited, ExitCode: 3, ObservedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	if msg.UUID != id.String() {
		t.Errorf("id = %s, want %s", msg.UUID, id)
	}
	want := `{"type":"kernel.status","version":1,"data":{"session_id":"` + session.String() + `","kernel_id":"` + kernel.String() +
		`","agent_id":"node-1","phase":"exited","exit_code":3,"observed_at":"2026-11-21T08:00:00.123456789Z"}}`
	if string(msg.Payload) != want {
		t.Errorf("payload\n got %s\nwant %s", msg.Payload, want)
	}
}

// The metadata keys are the bus's, and agent ids follow the bus's rules.
func TestAgreesWithBus(t *testing.T) {
	t.Parallel()
	if protocol.MetaType != bus.MetaType || protocol.MetaVersion != bus.MetaVersion {
		t.Errorf("metadata keys %q/%q, bus uses %q/%q", protocol.MetaType, protocol.MetaVersion, bus.MetaType, bus.MetaVersion)
	}
	for _, id := range []string{"node-1", "a_b", "", "a.b", "a b", "a*", "a>", "é", strings.Repeat("x", 128), strings.Repeat("x", 129)} {
		if got, want := protocol.ValidateAgentID(id) == nil, bus.ValidateID("agent id", id) == nil; got != want {
			t.Errorf("agent id %q: valid %v here, %v for the bus", id, got, want)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	t.Parallel()
	good, err := protocol.NewMessage(samples()[2])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		payload string
		meta    string // Cairn-Type metadata
		id      string
	}{
		{name: "not JSON", payload: "{"},
		{name: "not an object", payload: "[]"},
		{name: "no type", payload: `{"version":1,"data":{}}`},
		{name: "unknown type", payload: `{"type":"kernel.explode","version":1,"data":{}}`},
		{name: "future version", payload: strings.Replace(string(good.Payload), `"version":1`, `"version":2`, 1)},
		{name: "no data", payload: `{"type":"kernel.status","version":1}`},
		{name: "null data", payload: `{"type":"kernel.status","version":1,"data":null}`},
		{name: "data of the wrong shape", payload: `{"type":"kernel.status","version":1,"data":{"kernel_id":5}}`},
		{name: "invalid message", payload: `{"type":"kernel.status","version":1,"data":{"phase":"running"}}`},
		{name: "trailing data", payload: string(good.Payload) + "{}"},
		{name: "type disagrees with metadata", payload: string(good.Payload), meta: protocol.TypeKernelCreate},
		{name: "id is not a UUID", payload: string(good.Payload), id: "nope"},
	} {
		id := tc.id
		if id == "" {
			id = uuid.NewString()
		}
		msg := message.NewMessage(id, []byte(tc.payload))
		if tc.meta != "" {
			msg.Metadata.Set(protocol.MetaType, tc.meta)
		}
		if _, err := protocol.Decode(msg); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("%s: %v, want domain.ErrInvalid", tc.name, err)
		}
	}
	// A field a newer agent added is ignored.
	newer := strings.Replace(string(good.Payload), `"agent_id"`, `"gpu_temperature":71,"agent_id"`, 1)
	if _, err := protocol.DecodePayload([]byte(newer), ""); err != nil {
		t.Errorf("unknown field: %v", err)
	}
}

func TestEncodeRefuses(t *testing.T) {
	t.Parallel()
	if _, err := protocol.Encode(uuid.Nil, samples()[0]); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("nil id: %v", err)
	}
	if _, err := protocol.NewMessage(protocol.KernelSync{}); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("invalid message: %v", err)
	}
	if _, err := protocol.NewMessage(nil); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("nil message: %v", err)
	}
}

func TestDerivedID(t *testing.T) {
	t.Parallel()
	base := uuid.MustParse("0190f3a2-0000-7000-8000-000000000001")
	a, b := protocol.DerivedID(base, kernel.String()), protocol.DerivedID(base, kernel2.String())
	if a != protocol.DerivedID(base, kernel.String()) {
		t.Error("DerivedID is not deterministic")
	}
	if a == b || a == base || a == uuid.Nil {
		t.Errorf("DerivedID: %s, %s from %s", a, b, base)
	}
}
