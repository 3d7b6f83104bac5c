package bus_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/natsembed"
)

// waitTimeout bounds every wait for a message or a condition: generous, as
// the race detector and a shared machine slow things down.
const waitTimeout = 20 * time.Second

// testLog collects a test's logs and prints them only if the test fails:
// goroutines of NATS may log after the test returned, when t.Log panics.
func testLog(t *testing.T) *slog.Logger {
	t.Helper()
	w := &lockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", w.String())
		}
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// signalOn returns log with a channel that receives when a line with
// message msg is logged: a test waits for the state the line announces.
func signalOn(log *slog.Logger, msg string) (*slog.Logger, <-chan struct{}) {
	ch := make(chan struct{}, 1)
	return slog.New(signalHandler{log.Handler(), msg, ch}), ch
}

type signalHandler struct {
	slog.Handler
	msg string
	ch  chan struct{}
}

func (h signalHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.ch <- struct{}{}:
		default:
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h signalHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return signalHandler{h.Handler.WithAttrs(attrs), h.msg, h.ch}
}

func (h signalHandler) WithGroup(name string) slog.Handler {
	return signalHandler{h.Handler.WithGroup(name), h.msg, h.ch}
}

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

// startServer starts an embedded NATS server storing in a temporary
// directory, shut down when the test ends.
func startServer(t *testing.T, log *slog.Logger) *natsembed.Server {
	t.Helper()
	return startServerIn(t, t.TempDir(), log)
}

// startServerIn starts an embedded NATS server storing in dir.
func startServerIn(t *testing.T, dir string, log *slog.Logger) *natsembed.Server {
	t.Helper()
	srv, err := natsembed.Start(t.Context(), natsembed.Options{StoreDir: dir, Logger: log, Insecure: true})
	if err != nil {
		t.Fatalf("start NATS: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// reportTopic is agentID's reports topic.
func reportTopic(t *testing.T, agentID string) string {
	t.Helper()
	topic, err := bus.ReportTopic(agentID)
	if err != nil {
		t.Fatal(err)
	}
	return topic
}

// testConfig has short retries so that redelivery tests run fast: three
// calls per delivery.
func testConfig(url string) bus.Config {
	return bus.Config{
		URL:          url,
		ClientName:   "cairn-test",
		AckWait:      10 * time.Second,
		RetryMin:     20 * time.Millisecond,
		RetryMax:     200 * time.Millisecond,
		Retries:      2,
		DrainTimeout: 5 * time.Second,
	}
}

// connectBus connects a Bus, closed when the test ends.
func connectBus(t *testing.T, cfg bus.Config, log *slog.Logger) *bus.Bus {
	t.Helper()
	b, err := bus.Connect(t.Context(), cfg, log)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return b
}

// handling runs b.Handle in the background; stop cancels it and waits
// until it has returned (and checks it returned nil).
func handling(t *testing.T, b *bus.Bus, topic, durable string, h bus.Handler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- b.Handle(ctx, topic, durable, h) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Handle(%s, %s): %v", topic, durable, err)
				}
			case <-time.After(waitTimeout):
				t.Errorf("Handle(%s, %s) did not return after its context ended", topic, durable)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// delivery is one call of a recording handler.
type delivery struct {
	uuid    string
	attempt int
	ev      eventstore.RecordedEvent
	msg     *message.Message
}

// recorder is a handler that decodes events and reports every call.
func recorder(ch chan<- delivery) bus.Handler {
	return func(ctx context.Context, m *message.Message) error {
		ev, err := bus.DecodeEvent(m)
		if err != nil {
			return bus.Permanent(err)
		}
		ch <- delivery{uuid: m.UUID, attempt: bus.Attempt(m), ev: ev, msg: m}
		return nil
	}
}

// receive waits for n deliveries.
func receive(t *testing.T, ch <-chan delivery, n int) []delivery {
	t.Helper()
	out := make([]delivery, 0, n)
	timeout := time.After(waitTimeout)
	for len(out) < n {
		select {
		case d := <-ch:
			out = append(out, d)
		case <-timeout:
			t.Fatalf("received %d of %d messages", len(out), n)
		}
	}
	return out
}

// event returns a valid recorded event with every field set.
func event(stream string, position uint64, data string) eventstore.RecordedEvent {
	return eventstore.RecordedEvent{
		ID:         eventstore.NewEventID(),
		Stream:     stream,
		Type:       "kernel.allocated",
		Version:    2,
		Revision:   int64(position) - 1,
		Position:   position,
		RecordedAt: time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC),
		Data:       json.RawMessage(data),
		Metadata: eventstore.Metadata{
			Actor: "alice@example.com", AccessKey: "AKIA-TEST", ActingAs: "bob@example.com",
			RequestID: "req-1", CausationID: "cmd-1", ClientIP: "192.0.2.7",
		},
	}
}

// publishEvents publishes one event message per event.
func publishEvents(t *testing.T, b *bus.Bus, topic string, evs ...eventstore.RecordedEvent) {
	t.Helper()
	msgs := make([]*message.Message, len(evs))
	for i, ev := range evs {
		m, err := bus.NewEventMessage(ev)
		if err != nil {
			t.Fatalf("NewEventMessage: %v", err)
		}
		msgs[i] = m
	}
	if err := b.Publish(t.Context(), topic, msgs...); err != nil {
		t.Fatalf("publish to %s: %v", topic, err)
	}
}

// agentTopic is bus.AgentTopic for an id known to be valid.
func agentTopic(t *testing.T, id string) string {
	t.Helper()
	topic, err := bus.AgentTopic(id)
	if err != nil {
		t.Fatal(err)
	}
	return topic
}

// inspector looks at JetStream's own view of consumers, over a plain
// connection of its own.
type inspector struct {
	js jetstream.JetStream
}

func inspect(t *testing.T, url string) inspector {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return inspector{js: js}
}

func (in inspector) consumer(t *testing.T, stream, durable string) *jetstream.ConsumerInfo {
	t.Helper()
	c, err := in.js.PushConsumer(t.Context(), stream, durable)
	if err != nil {
		t.Fatalf("consumer %s/%s: %v", stream, durable, err)
	}
	info, err := c.Info(t.Context())
	if err != nil {
		t.Fatalf("consumer %s/%s info: %v", stream, durable, err)
	}
	return info
}

// settled waits until the consumer has nothing pending nor awaiting an ack
// (every message delivered was acked), and returns its state then.
func (in inspector) settled(t *testing.T, stream, durable string) *jetstream.ConsumerInfo {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		info := in.consumer(t, stream, durable)
		if info.NumPending == 0 && info.NumAckPending == 0 && info.NumRedelivered == 0 {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer %s/%s did not settle: pending %d, ack pending %d, redelivered %d",
				stream, durable, info.NumPending, info.NumAckPending, info.NumRedelivered)
		}
		<-tick.C
	}
}

// assertIDs checks that ds are deliveries of want, in order.
func assertIDs(t *testing.T, ds []delivery, want []eventstore.RecordedEvent) {
	t.Helper()
	if len(ds) != len(want) {
		t.Fatalf("%d deliveries, want %d", len(ds), len(want))
	}
	for i := range ds {
		if ds[i].ev.ID != want[i].ID {
			t.Errorf("delivery %d: event %s (position %d), want %s (position %d)",
				i, ds[i].ev.ID, ds[i].ev.Position, want[i].ID, want[i].Position)
		}
	}
}

func sortByPosition(ds []delivery) {
	slices.SortFunc(ds, func(a, b delivery) int { return cmp.Compare(a.ev.Position, b.ev.Position) })
}

// jsonSize is the length of v in JSON.
func jsonSize(v any) (int, error) {
	b, err := json.Marshal(v)
	return len(b), err
}

// nonLoopbackIPv4 is an address of this machine that another machine
// could dial, or 127.0.0.1 when it has none.
func nonLoopbackIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "127.0.0.1"
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
	}
	return "127.0.0.1"
}
