package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/containers/podman/v5/libpod/define"
	"github.com/containers/podman/v5/pkg/bindings"
	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/google/uuid"
	"github.com/nats-io/nkeys"

	"github.com/cairnhq/cairn/agents/node"
	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/agents/runtime/podman"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/busauth"
	"github.com/cairnhq/cairn/infra/bus/bustest"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// waitTimeout bounds every wait: generous, as the race detector and a
// shared machine slow Podman down.
const waitTimeout = 45 * time.Second

// harness is one test's world: an embedded NATS server, Podman, a
// "manager" connection that publishes commands to the agent's topic and
// records every report, and a unique agent id (so parallel tests never see
// each other's containers; cleanup removes the agent's containers).
type harness struct {
	t       *testing.T
	ctx     context.Context
	nats    *bustest.Server
	creds   string
	sealKey nkeys.KeyPair
	mgr     *bus.Bus
	rt      *podman.Runtime
	conn    context.Context // podman bindings connection, to look deeper than the port
	uri     string
	image   string
	agentID string
	logs    *lockedBuffer
	reports *recorder
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	uri := podmantest.URL(t)
	image := podmantest.Image(t, uri)
	ctx, cancel := context.WithTimeout(context.Background(), 4*waitTimeout)
	t.Cleanup(cancel)

	h := &harness{t: t, ctx: ctx, uri: uri, image: image, agentID: "test-" + randomID(t), logs: &lockedBuffer{}, reports: &recorder{changed: make(chan struct{})}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", h.logs.String())
		}
	})
	log := h.logger()
	var err error
	srv := bustest.Start(t, log)
	h.nats = srv
	h.creds, _ = srv.AgentCredentials(t, h.agentID)
	if h.sealKey, err = protocol.NewSealKey(); err != nil {
		t.Fatal(err)
	}

	if h.rt, err = podman.Connect(ctx, uri); err != nil {
		t.Fatal(err)
	}
	if h.conn, err = bindings.NewConnection(ctx, uri); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.removeAll)

	h.mgr, err = bus.Connect(ctx, bus.Config{URL: srv.ClientURL(), CredentialsFile: srv.ManagerCredentials(t), ClientName: "test-manager", RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond}, log)
	if err != nil {
		t.Fatal(err)
	}
	// The manager makes the agent's consumer when it registers
	// (infra/dispatch/reports); this test's manager makes it at once.
	if err := h.mgr.EnsureAgentConsumer(ctx, h.agentID); err != nil {
		t.Fatal(err)
	}
	hctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.mgr.Handle(hctx, bus.ReportsTopic, "test-manager", h.reports.handle) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("reports handler: %v", err)
		}
		if err := h.mgr.Close(); err != nil {
			t.Errorf("close manager bus: %v", err)
		}
	})
	return h
}

func (h *harness) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// config is an agent configuration for this test.
func (h *harness) config() node.Config {
	dir := h.dataDir()
	return node.Config{
		AgentID:            h.agentID,
		BusURL:             h.nats.ClientURL(),
		BusCredentialsFile: h.creds,
		PodmanURI:          h.uri,
		DataDir:            dir,
		CDIDirs:            []string{h.t.TempDir()}, // hermetic: no CDI spec
		HeartbeatInterval:  500 * time.Millisecond,
		StopGrace:          time.Second, // busybox sh as pid 1 ignores SIGTERM
		RetryMin:           50 * time.Millisecond,
		RetryMax:           time.Second,
		Version:            "test",
	}
}

// dataDir is a new agent data directory holding the harness's sealing
// key (every agent of the harness has the same one; publish seals to it).
func (h *harness) dataDir() string {
	dir := h.t.TempDir()
	seed, err := h.sealKey.Seed()
	if err != nil {
		h.t.Fatal(err)
	}
	if err := busauth.WriteSecretFile(filepath.Join(dir, "seal.nk"), seed); err != nil {
		h.t.Fatal(err)
	}
	return dir
}

// signAs signs a request as the manager does for agentID.
func (h *harness) signAs(agentID string) func(*http.Request) {
	return func(req *http.Request) {
		if err := h.nats.Keys.SignAgentRequest(req, agentID, time.Now()); err != nil {
			h.t.Fatal(err)
		}
	}
}

// strangerSigns signs with keys of another installation.
func (h *harness) strangerSigns() func(*http.Request) {
	other, err := busauth.LoadOrCreateKeys(filepath.Join(h.t.TempDir(), "other"))
	if err != nil {
		h.t.Fatal(err)
	}
	return func(req *http.Request) {
		if err := other.SignAgentRequest(req, h.agentID, time.Now()); err != nil {
			h.t.Fatal(err)
		}
	}
}

// runAgent starts an agent with cfg; stop ends Run and checks that it
// returned nil (also at cleanup).
func (h *harness) runAgent(cfg node.Config) (a *node.Agent, stop func()) {
	h.t.Helper()
	a, err := node.New(cfg, h.logger())
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					h.t.Errorf("Run: %v", err)
				}
			case <-time.After(waitTimeout):
				h.t.Errorf("Run did not return after its context ended")
			}
		})
	}
	h.t.Cleanup(stop)
	return a, stop
}

// send publishes a command to the agent's topic.
func (h *harness) send(m protocol.Message) *message.Message {
	h.t.Helper()
	msg, err := protocol.NewMessage(m)
	if err != nil {
		h.t.Fatal(err)
	}
	h.publish(msg)
	return msg
}

// publish seals msg to the agent, as the manager does, and publishes it.
func (h *harness) publish(msg *message.Message) {
	h.t.Helper()
	pub, err := h.sealKey.PublicKey()
	if err != nil {
		h.t.Fatal(err)
	}
	if msg.Metadata.Get(protocol.MetaSealed) == "" { // a message sent again is sealed already
		if err := protocol.Seal(msg, pub); err != nil {
			h.t.Fatal(err)
		}
	}
	topic, err := bus.AgentTopic(h.agentID)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.mgr.Publish(h.ctx, topic, msg); err != nil {
		h.t.Fatal(err)
	}
}

// create returns a kernel.create for a new kernel running command, with
// half a core and 64 MiB.
func (h *harness) create(command ...string) protocol.KernelCreate {
	return protocol.KernelCreate{
		KernelID: uuid.Must(uuid.NewV7()), SessionID: uuid.Must(uuid.NewV7()), AgentID: h.agentID, Role: domain.KernelMain,
		Image: h.image, Command: command,
		Slots:              domain.Slots{domain.SlotCPU: 500, domain.SlotMem: domain.Units(64 << 20)},
		AllocationRevision: 1, At: time.Now().UTC(),
	}
}

func (h *harness) destroy(m protocol.KernelCreate) protocol.KernelDestroy {
	return protocol.KernelDestroy{KernelID: m.KernelID, SessionID: m.SessionID, AgentID: h.agentID, Reason: domain.ReasonUserRequested, At: time.Now().UTC()}
}

// status waits for a kernel.status about kernel in phase, reported after
// the mark-th report (see recorder.mark).
func (h *harness) status(mark int, kernel uuid.UUID, phase domain.KernelPhase) protocol.KernelStatus {
	h.t.Helper()
	m := h.reports.await(h.t, mark, fmt.Sprintf("kernel %s %s", kernel, phase), func(m protocol.Message) bool {
		s, ok := m.(protocol.KernelStatus)
		return ok && s.KernelID == kernel && s.Phase == phase
	})
	return m.(protocol.KernelStatus)
}

// register waits for an agent.register after mark.
func (h *harness) register(mark int) protocol.AgentRegister {
	h.t.Helper()
	return h.reports.await(h.t, mark, "agent.register", func(m protocol.Message) bool {
		_, ok := m.(protocol.AgentRegister)
		return ok
	}).(protocol.AgentRegister)
}

// phases returns the phases reported for kernel, in order.
func (h *harness) phases(kernel uuid.UUID) []domain.KernelPhase {
	var out []domain.KernelPhase
	for _, m := range h.reports.all() {
		if s, ok := m.(protocol.KernelStatus); ok && s.KernelID == kernel {
			out = append(out, s.Phase)
		}
	}
	return out
}

// containers lists the agent's containers.
func (h *harness) containers() []runtime.Container {
	h.t.Helper()
	cs, err := h.rt.List(h.ctx, h.agentID)
	if err != nil {
		h.t.Fatal(err)
	}
	return cs
}

// inspect returns Podman's full view of a container.
func (h *harness) inspect(id string) *define.InspectContainerData {
	h.t.Helper()
	data, err := containers.Inspect(h.conn, id, nil)
	if err != nil {
		h.t.Fatalf("inspect %s: %v", id, err)
	}
	return data
}

// eventually polls cond until it holds (at most waitTimeout): for what
// offers no event to wait for, such as output appearing in a log.
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	await.Until(h.t, waitTimeout, what, cond)
}

// removeAll removes every container of the test's agent.
func (h *harness) removeAll() {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cs, err := h.rt.List(ctx, h.agentID)
	if err != nil {
		h.t.Logf("cleanup: list: %v", err)
		return
	}
	for _, c := range cs {
		if err := h.rt.Remove(ctx, c.ID); err != nil {
			h.t.Logf("cleanup: remove %s: %v", c.Name, err)
		}
	}
}

// recorder keeps every report the manager side received, in order.
type recorder struct {
	mu      sync.Mutex
	msgs    []protocol.Message
	changed chan struct{} // closed and replaced on every new report
}

func (r *recorder) handle(_ context.Context, msg *message.Message) error {
	m, err := protocol.Decode(msg)
	if err != nil {
		return bus.Permanent(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
	close(r.changed)
	r.changed = make(chan struct{})
	return nil
}

// mark is the number of reports so far: await(mark, ...) only looks at
// later ones.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs)
}

func (r *recorder) all() []protocol.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]protocol.Message(nil), r.msgs...)
}

// await returns the first report after the mark-th that matches.
func (r *recorder) await(t *testing.T, mark int, what string, match func(protocol.Message) bool) protocol.Message {
	t.Helper()
	timeout := time.After(waitTimeout)
	for i := mark; ; {
		r.mu.Lock()
		for ; i < len(r.msgs); i++ {
			if match(r.msgs[i]) {
				m := r.msgs[i]
				r.mu.Unlock()
				return m
			}
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("no report %s within %s", what, waitTimeout)
		}
	}
}

// count returns how many reports after mark match.
func (r *recorder) count(mark int, match func(protocol.Message) bool) int {
	n := 0
	for _, m := range r.all()[mark:] {
		if match(m) {
			n++
		}
	}
	return n
}

func randomID(t testing.TB) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

func envOf(data *define.InspectContainerData) map[string]string {
	out := map[string]string{}
	if data.Config == nil {
		return out
	}
	for _, kv := range data.Config.Env {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

// lockedBuffer collects logs from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// An agent stopped while it starts (here: before it could ask Podman
// anything) ends without an error: a stop is not a failure.
func TestStopWhileStartingIsNoError(t *testing.T) {
	h := newHarness(t)
	a, err := node.New(h.config(), h.logger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	cancel()
	if err := a.Run(ctx); err != nil {
		t.Fatalf("Run with its context ended: %v, want nil", err)
	}
}
