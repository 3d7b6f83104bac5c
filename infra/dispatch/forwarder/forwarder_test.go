package forwarder_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/dispatch/forwarder"
	"github.com/cairnhq/cairn/infra/managertest"
)

var bg = context.Background()

func q(s string) domain.Quantity {
	v, err := domain.ParseQuantity(s, domain.SlotCount)
	if err != nil {
		panic(err)
	}
	return v
}

func agentSpec(id string) domain.AgentSpec {
	return domain.AgentSpec{
		ID: id, Architecture: "x86_64",
		Capacity: domain.Slots{domain.SlotCPU: domain.Units(8), domain.SlotMem: domain.Units(64 << 30),
			domain.SlotCUDADevice: domain.Units(2), domain.SlotCUDAShares: domain.Units(2)},
		Devices: []domain.Device{{ID: "GPU-0", Kind: domain.SlotCUDADevice}, {ID: "GPU-1", Kind: domain.SlotCUDADevice}},
	}
}

var kernelSlots = domain.Slots{domain.SlotCPU: domain.Units(2), domain.SlotMem: domain.Units(4 << 30), domain.SlotCUDAShares: q("0.5")}

func sessionSpec() domain.SessionSpec {
	return domain.SessionSpec{
		Name: "train", Owner: domain.Owner{UserID: "u1", AccessKey: "AKIA1"},
		Domain: "default", Project: "ml", ResourceGroup: "default",
		Type: domain.SessionBatch, Image: "cr.io/pytorch:2.4", Command: "python train.py --epochs 3",
		Env: map[string]string{"WANDB_MODE": "offline", "SEED": "7"}, Resources: kernelSlots,
	}
}

// schedule requests a session and places its kernel on agent, device GPU-0.
func schedule(e *managertest.Env, agent string) commands.RequestSessionResult {
	e.T.Helper()
	res := e.Request(sessionSpec())
	_, err := e.Handlers.ScheduleSession.Handle(bg, e.MD, commands.ScheduleSession{SessionID: res.SessionID, Kernels: []domain.KernelPlacement{{
		KernelID: res.KernelIDs[0], AgentID: agent, Devices: []domain.DeviceShare{{DeviceID: "GPU-0", Amount: q("0.5")}},
	}}})
	if err != nil {
		e.T.Fatal(err)
	}
	return res
}

// start runs a forwarder with its checkpoint in dir.
func start(e *managertest.Env, pub forwarder.Publisher, dir string) (stop func()) {
	e.T.Helper()
	f, err := forwarder.New(forwarder.Config{Logger: e.Log, RetryMin: 10 * time.Millisecond, RetryMax: 100 * time.Millisecond},
		e.Store, pub, forwarder.NewFileCheckpoint(filepath.Join(dir, "forwarder.checkpoint")))
	if err != nil {
		e.T.Fatal(err)
	}
	return managertest.Go(e.T, "forwarder", f.Run)
}

// eventOf returns the only event of a type in a stream.
func eventOf(e *managertest.Env, stream, eventType string) eventstore.RecordedEvent {
	e.T.Helper()
	var out []eventstore.RecordedEvent
	for _, ev := range e.Events(stream) {
		if ev.Type == eventType {
			out = append(out, ev)
		}
	}
	if len(out) != 1 {
		e.T.Fatalf("%d %s events in %s, want 1", len(out), eventType, stream)
	}
	return out[0]
}

func TestForwarderSendsKernelCreateAndDestroy(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	e.RegisterAgent(agentSpec("a1"))
	received := e.Listen(b, "a1")
	start(e, b, t.TempDir())

	res := schedule(e, "a1")
	kernel := res.KernelIDs[0]
	got := e.Next(received)
	alloc := eventOf(e, domain.AgentStream("a1").String(), domain.TypeAgentAllocated)
	want := protocol.KernelCreate{
		KernelID: kernel, SessionID: res.SessionID, AgentID: "a1", Role: domain.KernelMain,
		Image: "cr.io/pytorch:2.4", Command: []string{"/bin/sh", "-c", "python train.py --epochs 3"},
		Env:   map[string]string{"WANDB_MODE": "offline", "SEED": "7"},
		Slots: kernelSlots, Devices: []domain.DeviceShare{{DeviceID: "GPU-0", Amount: q("0.5")}},
		AllocationRevision: alloc.Revision, At: managertest.T0,
	}
	create, ok := got.Message.(protocol.KernelCreate)
	if !ok || got.ID != alloc.ID.String() {
		t.Fatalf("got %T id %s, want kernel.create with the allocation's id %s", got.Message, got.ID, alloc.ID)
	}
	create.At = create.At.UTC()
	if !reflect.DeepEqual(create, want) {
		t.Fatalf("kernel.create\n got %+v\nwant %+v", create, want)
	}

	// Terminating: a destroy for the placed kernel.
	if _, err := e.Handlers.TerminateSession.Handle(bg, e.MD, commands.TerminateSession{SessionID: res.SessionID}); err != nil {
		t.Fatal(err)
	}
	terminating := eventOf(e, domain.SessionStream(res.SessionID).String(), domain.TypeSessionTerminating)
	got = e.Next(received)
	destroy, ok := got.Message.(protocol.KernelDestroy)
	if !ok || got.ID != protocol.DerivedID(terminating.ID, kernel.String()).String() ||
		destroy.KernelID != kernel || destroy.SessionID != res.SessionID || destroy.AgentID != "a1" || destroy.Reason != domain.ReasonUserRequested {
		t.Fatalf("got %s %+v", got.ID, got.Message)
	}

	// The agent reports the kernel gone; the release sends a last destroy.
	if _, err := e.Handlers.ReportKernelStatus.Handle(bg, e.MD, commands.ReportKernelStatus{
		SessionID: res.SessionID, KernelID: kernel, AgentID: "a1", Phase: domain.PhaseRemoved,
	}); err != nil {
		t.Fatal(err)
	}
	released := eventOf(e, domain.AgentStream("a1").String(), domain.TypeAgentReleased)
	got = e.Next(received)
	if destroy, ok := got.Message.(protocol.KernelDestroy); !ok || got.ID != released.ID.String() || destroy.KernelID != kernel {
		t.Fatalf("got %s %+v, want the release's destroy", got.ID, got.Message)
	}
}

// withAccess is md with an access record that the command appends with
// its events, as the HTTP layer's requests do.
func withAccess(md commands.Metadata, action string) commands.Metadata {
	md.Access = commands.NewAccess(audit.Record{Time: managertest.T0, Action: action, Outcome: audit.Success})
	return md
}

// A session requested and terminated through the API holds the requests'
// access records in its stream: the destroy is sent all the same.
func TestForwarderReadsPastAccessRecords(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	e.RegisterAgent(agentSpec("a1"))
	received := e.Listen(b, "a1")
	start(e, b, t.TempDir())

	res, err := e.Handlers.RequestSession.Handle(bg, withAccess(e.MD, "session.create"), commands.RequestSession{Spec: sessionSpec()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Handlers.ScheduleSession.Handle(bg, e.MD, commands.ScheduleSession{SessionID: res.SessionID, Kernels: []domain.KernelPlacement{{
		KernelID: res.KernelIDs[0], AgentID: "a1", Devices: []domain.DeviceShare{{DeviceID: "GPU-0", Amount: q("0.5")}},
	}}}); err != nil {
		t.Fatal(err)
	}
	if got := e.Next(received); reflect.TypeOf(got.Message) != reflect.TypeOf(protocol.KernelCreate{}) {
		t.Fatalf("got %T, want kernel.create", got.Message)
	}
	if _, err := e.Handlers.TerminateSession.Handle(bg, withAccess(e.MD, "session.delete"), commands.TerminateSession{SessionID: res.SessionID}); err != nil {
		t.Fatal(err)
	}
	if n := e.Count(domain.SessionStream(res.SessionID).String(), domain.TypeAccessLogged); n != 2 {
		t.Fatalf("%d access records in the session's stream, want 2", n)
	}
	got := e.Next(received)
	if destroy, ok := got.Message.(protocol.KernelDestroy); !ok || destroy.KernelID != res.KernelIDs[0] || destroy.Reason != domain.ReasonUserRequested {
		t.Fatalf("got %s %+v, want the kernel's destroy", got.ID, got.Message)
	}
}

func TestForwarderSkipsWhatCannotBeForwarded(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	e.RegisterAgent(agentSpec("a1"))
	// An allocation of a session that does not exist.
	ghost := uuid.MustParse("0195a0c0-0000-7000-8000-00000000dead")
	ev, err := eventstore.NewEvent(domain.TypeAgentAllocated, domain.AgentAllocated{
		KernelID: ghost, SessionID: ghost, Slots: domain.Slots{domain.SlotCPU: domain.Units(1)}, At: managertest.T0,
	}, e.MD.Stored())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.Append(bg, domain.AgentStream("a1").String(), eventstore.Any, ev); err != nil {
		t.Fatal(err)
	}
	received := e.Listen(b, "a1")
	start(e, b, t.TempDir())

	res := schedule(e, "a1")
	if got := e.Next(received); got.Message.(protocol.KernelCreate).KernelID != res.KernelIDs[0] {
		t.Fatalf("got %+v, want the real session's create", got.Message)
	}
}

// TestForwarderResumesFromItsCheckpoint stops a forwarder and starts
// another on a fresh bus (so that JetStream's deduplication cannot hide a
// republished message): it sends everything after the checkpoint, and
// nothing at or before it.
func TestForwarderResumesFromItsCheckpoint(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	dir := t.TempDir()
	e.RegisterAgent(agentSpec("a1"))
	first := e.Bus()
	received := e.Listen(first, "a1")
	stop := start(e, first, dir)
	one := schedule(e, "a1")
	if got := e.Next(received); got.Message.(protocol.KernelCreate).KernelID != one.KernelIDs[0] {
		t.Fatalf("got %+v", got.Message)
	}
	// Stopping may interrupt the publish whose message just arrived: the
	// event then stays after the checkpoint and is sent again.
	stop()
	cp, err := forwarder.NewFileCheckpoint(filepath.Join(dir, "forwarder.checkpoint")).Load(bg)
	if err != nil {
		t.Fatal(err)
	}

	two := schedule(e, "a1")
	positions := map[string]uint64{} // message id (= allocation event id) → position
	for _, ev := range e.Events(domain.AgentStream("a1").String()) {
		positions[ev.ID.String()] = ev.Position
	}
	second := e.Bus()
	received = e.Listen(second, "a1")
	start(e, second, dir)
	for {
		got := e.Next(received)
		if positions[got.ID] <= cp {
			t.Fatalf("republished %s (position %d) from before the checkpoint %d", got.Message.MessageType(), positions[got.ID], cp)
		}
		if create, ok := got.Message.(protocol.KernelCreate); ok && create.KernelID == two.KernelIDs[0] {
			return
		}
	}
}

// failingPublisher refuses the first attempts, as a bus that is down.
type failingPublisher struct {
	inner    forwarder.Publisher
	failures chan struct{}
}

func (p *failingPublisher) Publish(ctx context.Context, topic string, msgs ...*message.Message) error {
	select {
	case <-p.failures:
		return &domain.Error{Kind: domain.KindUnavailable, Message: "bus down"}
	default:
		return p.inner.Publish(ctx, topic, msgs...)
	}
}

func TestForwarderRetriesUntilTheBusTakesTheMessage(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	e.RegisterAgent(agentSpec("a1"))
	received := e.Listen(b, "a1")
	failures := make(chan struct{}, 3)
	for range 3 {
		failures <- struct{}{}
	}
	start(e, &failingPublisher{inner: b, failures: failures}, t.TempDir())
	res := schedule(e, "a1")
	if got := e.Next(received); got.Message.(protocol.KernelCreate).KernelID != res.KernelIDs[0] {
		t.Fatalf("got %+v", got.Message)
	}
	if len(failures) != 0 {
		t.Fatal("the publisher never failed")
	}
}

// downPublisher is a bus that is down for good; it tells of each attempt.
type downPublisher struct{ attempts chan struct{} }

func (p downPublisher) Publish(context.Context, string, ...*message.Message) error {
	p.attempts <- struct{}{}
	return &domain.Error{Kind: domain.KindUnavailable, Message: "bus down"}
}

func TestForwarderStopsWhileRetrying(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	e.RegisterAgent(agentSpec("a1"))
	pub := downPublisher{attempts: make(chan struct{}, 10)}
	// The wait after a failure is an hour: the forwarder can stop in time
	// only because its context ends the wait.
	f, err := forwarder.New(forwarder.Config{Logger: e.Log, RetryMin: time.Hour, RetryMax: time.Hour},
		e.Store, pub, forwarder.NewFileCheckpoint(filepath.Join(t.TempDir(), "forwarder.checkpoint")))
	if err != nil {
		t.Fatal(err)
	}
	stop := managertest.Go(t, "forwarder", f.Run) // fails the test if Run does not return
	schedule(e, "a1")
	<-pub.attempts
	stop()
	if n := len(pub.attempts); n != 0 {
		t.Errorf("%d more attempts after the first, want none: the wait is an hour", n)
	}
}

func TestFileCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cp := forwarder.NewFileCheckpoint(filepath.Join(dir, "cp"))
	if pos, err := cp.Load(bg); err != nil || pos != 0 {
		t.Fatalf("missing file: %d, %v", pos, err)
	}
	for _, pos := range []uint64{42, 1 << 62} {
		if err := cp.Save(bg, pos); err != nil {
			t.Fatal(err)
		}
		if got, err := cp.Load(bg); err != nil || got != pos {
			t.Fatalf("load %d, %v; want %d", got, err, pos)
		}
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(entries) != 0 {
		t.Fatalf("temporary files left: %v", entries)
	}
	if err := os.WriteFile(filepath.Join(dir, "cp"), []byte("not a position"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Load(bg); err == nil {
		t.Fatal("a garbled checkpoint loaded")
	}
}

func TestNewRefusesMissingParts(t *testing.T) {
	t.Parallel()
	if _, err := forwarder.New(forwarder.Config{SaveEvery: -1}, nil, nil, nil); err == nil {
		t.Fatal("built a forwarder without its parts")
	}
}

// TestForwarderSavesAfterTheDelay: a running forwarder saves the position
// of a trickle of events once SaveDelay has passed, without a stop.
func TestForwarderSavesAfterTheDelay(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	dir := t.TempDir()
	e.RegisterAgent(agentSpec("a1"))
	b := e.Bus()
	received := e.Listen(b, "a1")
	cpFile := forwarder.NewFileCheckpoint(filepath.Join(dir, "forwarder.checkpoint"))
	f, err := forwarder.New(forwarder.Config{Logger: e.Log, SaveDelay: 20 * time.Millisecond}, e.Store, b, cpFile)
	if err != nil {
		t.Fatal(err)
	}
	managertest.Go(e.T, "forwarder", f.Run)
	schedule(e, "a1")
	e.Next(received)
	alloc := eventOf(e, domain.AgentStream("a1").String(), domain.TypeAgentAllocated)
	// The checkpoint is a file the forwarder writes: poll it.
	await.Until(t, managertest.WaitTimeout, fmt.Sprintf("the checkpoint at %d or later while running", alloc.Position), func() bool {
		cp, err := cpFile.Load(bg)
		if err != nil {
			t.Fatal(err)
		}
		return cp >= alloc.Position
	})
}

// capture keeps a copy of every payload published, as the bus would keep
// it in its stream.
type capture struct {
	forwarder.Publisher
	mu       sync.Mutex
	payloads map[string][]string // topic → payloads
}

func (c *capture) Publish(ctx context.Context, topic string, msgs ...*message.Message) error {
	c.mu.Lock()
	for _, m := range msgs {
		c.payloads[topic] = append(c.payloads[topic], string(m.Payload))
	}
	c.mu.Unlock()
	return c.Publisher.Publish(ctx, topic, msgs...)
}

func (c *capture) of(topic string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.payloads[topic]...)
}

// TestForwarderSealsWhatItSends: what the bus keeps of a kernel.create
// shows neither the session's environment nor its command, while the
// agent opens it; an agent that announced no seal key is sent nothing.
func TestForwarderSealsWhatItSends(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	pub := &capture{Publisher: b, payloads: map[string][]string{}}
	e.RegisterAgent(agentSpec("a1"))
	// a2 registers without a key (possible in process only).
	if _, err := e.Handlers.RegisterAgent.Handle(bg, e.MD, commands.RegisterAgent{Spec: agentSpec("a2")}); err != nil {
		t.Fatal(err)
	}
	received := e.Listen(b, "a1")
	start(e, pub, t.TempDir())

	schedule(e, "a2")
	res := schedule(e, "a1")
	got := e.Next(received)
	if c, ok := got.Message.(protocol.KernelCreate); !ok || c.KernelID != res.KernelIDs[0] || c.Env["WANDB_MODE"] != "offline" {
		t.Fatalf("a1 opened %+v", got.Message)
	}
	topic, _ := bus.AgentTopic("a1")
	sent := pub.of(topic)
	if len(sent) != 1 {
		t.Fatalf("%d messages to a1, want 1", len(sent))
	}
	for _, secret := range []string{"WANDB_MODE", "offline", "train.py", res.KernelIDs[0].String()} {
		if strings.Contains(sent[0], secret) {
			t.Errorf("the bus keeps %q readable: %s", secret, sent[0])
		}
	}
	topic2, _ := bus.AgentTopic("a2")
	if n := len(pub.of(topic2)); n != 0 {
		t.Errorf("%d messages sent to a2, which has no seal key", n)
	}
}

// kernel.create carries the service ports of the session's image, as
// registered for the agent's architecture (the reference with its
// implicit latest tag too), then the session's pre-opened ports that are
// not already among them.
func TestForwarderSendsServicePorts(t *testing.T) {
	t.Parallel()
	e := managertest.New(t)
	b := e.Bus()
	e.RegisterAgent(agentSpec("a1"))
	ports := []domain.ServicePort{{Name: "jupyter", Protocol: "http", Port: 8888}, {Name: "ssh", Protocol: "tcp", Port: 22}}
	for _, arch := range []string{"x86_64", "aarch64"} {
		spec := domain.ImageSpec{ServicePorts: ports}
		if arch == "aarch64" { // another architecture's registration is not this agent's
			spec.ServicePorts = []domain.ServicePort{{Name: "other", Protocol: "http", Port: 1}}
		}
		if _, err := e.Handlers.RegisterImage.Handle(bg, e.MD, commands.RegisterImage{
			Actor: managertest.Superadmin, Reference: "cr.io/notebook:latest", Architecture: arch, Spec: spec}); err != nil {
			t.Fatal(err)
		}
	}
	received := e.Listen(b, "a1")
	start(e, b, t.TempDir())

	spec := sessionSpec()
	spec.Image = "cr.io/notebook" // the request may leave the tag out
	spec.PreopenPorts = []int{9000, 8888}
	res := e.Request(spec)
	if _, err := e.Handlers.ScheduleSession.Handle(bg, e.MD, commands.ScheduleSession{SessionID: res.SessionID, Kernels: []domain.KernelPlacement{{
		KernelID: res.KernelIDs[0], AgentID: "a1", Devices: []domain.DeviceShare{{DeviceID: "GPU-0", Amount: q("0.5")}},
	}}}); err != nil {
		t.Fatal(err)
	}
	create, ok := e.Next(received).Message.(protocol.KernelCreate)
	want := []domain.ServicePort{ports[0], ports[1], {Name: "port-9000", Protocol: "preopen", Port: 9000}}
	if !ok || !reflect.DeepEqual(create.ServicePorts, want) {
		t.Fatalf("kernel.create service ports = %+v, want %+v", create.ServicePorts, want)
	}

	// An image registered for no architecture of the agent: only the
	// pre-opened ports.
	spec.Image, spec.PreopenPorts = "cr.io/pytorch:2.4", []int{7000}
	res = e.Request(spec)
	if _, err := e.Handlers.ScheduleSession.Handle(bg, e.MD, commands.ScheduleSession{SessionID: res.SessionID, Kernels: []domain.KernelPlacement{{
		KernelID: res.KernelIDs[0], AgentID: "a1", Devices: []domain.DeviceShare{{DeviceID: "GPU-1", Amount: q("0.5")}},
	}}}); err != nil {
		t.Fatal(err)
	}
	create, ok = e.Next(received).Message.(protocol.KernelCreate)
	if want := []domain.ServicePort{{Name: "port-7000", Protocol: "preopen", Port: 7000}}; !ok || !reflect.DeepEqual(create.ServicePorts, want) {
		t.Fatalf("kernel.create service ports = %+v, want %+v", create.ServicePorts, want)
	}
}
