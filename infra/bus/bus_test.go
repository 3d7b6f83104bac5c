package bus_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/bustest"
	"github.com/cairnhq/cairn/infra/bus/natsembed"
)

func TestRoundTripKeepsEveryEnvelopeField(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	srv := startServer(t, log)
	b := connectBus(t, testConfig(srv.ClientURL()), log)
	topic := agentTopic(t, "gpu-node-01")

	// Data with insignificant whitespace: it must travel byte for byte.
	want := event("agent-gpu-node-01", 42, `{ "kernel": "k-1",  "slots": {"cuda.shares": 0.5, "mem": 1073741824},
	  "env": ["A=1", "B=\u00e9"] }`)
	publishEvents(t, b, topic, want)

	got := make(chan delivery, 1)
	handling(t, b, topic, "agent-gpu-node-01", recorder(got))
	d := receive(t, got, 1)[0]

	ev := d.ev
	if ev.ID != want.ID || ev.Stream != want.Stream || ev.Type != want.Type || ev.Version != want.Version ||
		ev.Revision != want.Revision || ev.Position != want.Position || ev.Metadata != want.Metadata {
		t.Errorf("event = %+v\nwant %+v", ev, want)
	}
	if !ev.RecordedAt.Equal(want.RecordedAt) || ev.RecordedAt.Location() != want.RecordedAt.Location() {
		t.Errorf("recorded_at = %v, want %v", ev.RecordedAt, want.RecordedAt)
	}
	if !bytes.Equal(ev.Data, want.Data) {
		t.Errorf("data = %s, want %s", ev.Data, want.Data)
	}
	if d.uuid != want.ID.String() {
		t.Errorf("message UUID = %q, want the event id %s", d.uuid, want.ID)
	}
	if d.attempt != 1 {
		t.Errorf("attempt = %d, want 1", d.attempt)
	}
	for key, value := range map[string]string{
		bus.MetaStream: want.Stream, bus.MetaType: want.Type, bus.MetaVersion: "2",
		bus.MetaRevision: "41", bus.MetaPosition: "42", bus.MetaAttempt: "1",
	} {
		if got := d.msg.Metadata.Get(key); got != value {
			t.Errorf("metadata %s = %q, want %q", key, got, value)
		}
	}
}

func TestLargestEventPasses(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	srv := startServer(t, log)
	b := connectBus(t, testConfig(srv.ClientURL()), log)
	topic := agentTopic(t, "big")

	// Data plus metadata exactly at the store's limit: a 2 MiB event.
	want := event("agent-big", 1, `""`)
	md, err := jsonSize(want.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	want.Data = []byte(`"` + strings.Repeat("x", eventstore.DefaultMaxEventSize-md-2) + `"`)
	publishEvents(t, b, topic, want)

	got := make(chan delivery, 1)
	handling(t, b, topic, "agent-big", recorder(got))
	d := receive(t, got, 1)[0]
	if d.ev.ID != want.ID || !bytes.Equal(d.ev.Data, want.Data) {
		t.Errorf("got event %s with %d bytes of data, want %s with %d", d.ev.ID, len(d.ev.Data), want.ID, len(want.Data))
	}
	if n := len(d.msg.Payload); n <= eventstore.DefaultMaxEventSize {
		t.Errorf("payload is %d bytes: the test should exceed %d", n, eventstore.DefaultMaxEventSize)
	}

	// A payload over the limit is refused before it is sent.
	tooBig := message.NewMessage(uuid.NewString(), make([]byte, bus.MaxPayloadSize+1))
	if err := b.Publish(t.Context(), topic, tooBig); !errors.Is(err, domain.ErrTooLarge) {
		t.Errorf("publish of %d bytes: err = %v, want too-large", len(tooBig.Payload), err)
	}
}

func TestDurableConsumerResumesWhereItStopped(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	srv := startServer(t, log)
	b := connectBus(t, testConfig(srv.ClientURL()), log)
	in := inspect(t, srv.ClientURL())
	topic, durable := agentTopic(t, "a1"), "agent-a1"

	first := []eventstore.RecordedEvent{event("agent-a1", 1, `1`), event("agent-a1", 2, `2`), event("agent-a1", 3, `3`)}
	publishEvents(t, b, topic, first...)
	got := make(chan delivery, 10)
	stop := handling(t, b, topic, durable, recorder(got))
	assertIDs(t, receive(t, got, 3), first)
	in.settled(t, bus.AgentsStream, durable)
	stop()

	// Published while the agent is away.
	second := []eventstore.RecordedEvent{event("agent-a1", 4, `4`), event("agent-a1", 5, `5`), event("agent-a1", 6, `6`)}
	publishEvents(t, b, topic, second...)

	handling(t, b, topic, durable, recorder(got))
	assertIDs(t, receive(t, got, 3), second)
	info := in.settled(t, bus.AgentsStream, durable)
	// Six deliveries in all: none of the first three came back.
	if info.Delivered.Consumer != 6 || info.AckFloor.Stream != 6 {
		t.Errorf("consumer delivered %d (ack floor %d), want 6 deliveries of 6 messages", info.Delivered.Consumer, info.AckFloor.Stream)
	}
	select {
	case d := <-got:
		t.Errorf("unexpected delivery of %s (attempt %d)", d.uuid, d.attempt)
	default:
	}
}

func TestFailedHandlerIsRetriedUntilItSucceeds(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	srv := startServer(t, log)
	b := connectBus(t, testConfig(srv.ClientURL()), log)
	in := inspect(t, srv.ClientURL())

	type call struct {
		uuid    string
		attempt int
	}
	// testConfig's Retries is 2: three calls per delivery, then the
	// message is handed back and JetStream delivers it again.
	tests := []struct {
		name string
		// fail is the handler's result on its nth call, on delivery attempt.
		fail func(n, attempt int) error
		// wantAttempts is the delivery attempt of each call.
		wantAttempts []int
	}{
		{"error twice", func(n, _ int) error {
			if n < 3 {
				return fmt.Errorf("transient failure %d", n)
			}
			return nil
		}, []int{1, 1, 1}},
		{"error past the retries", func(n, _ int) error {
			if n < 5 {
				return fmt.Errorf("transient failure %d", n)
			}
			return nil
		}, []int{1, 1, 1, 2, 2}},
		{"panic once", func(n, _ int) error {
			if n == 1 {
				panic("bug")
			}
			return nil
		}, []int{1, 1}},
		// A handler that panics on every call of the first delivery: the
		// process lives, the message is handed back and redelivered.
		{"panic until redelivered", func(_, attempt int) error {
			if attempt == 1 {
				panic("bug")
			}
			return nil
		}, []int{1, 1, 1, 2}},
		{"permanent", func(int, int) error { return bus.Permanent(errors.New("cannot decode")) }, []int{1}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id := fmt.Sprintf("retry-%d", i)
			topic := agentTopic(t, id)
			ev := event("agent-"+id, 1, `{}`)
			publishEvents(t, b, topic, ev)

			calls := make(chan call, 10)
			var mu sync.Mutex
			n := 0
			handling(t, b, topic, id, func(ctx context.Context, m *message.Message) error {
				mu.Lock()
				n++
				nth := n
				mu.Unlock()
				calls <- call{m.UUID, bus.Attempt(m)}
				return tt.fail(nth, bus.Attempt(m))
			})
			for k, want := range tt.wantAttempts {
				select {
				case c := <-calls:
					if c.uuid != ev.ID.String() || c.attempt != want {
						t.Errorf("call %d: message %s attempt %d, want %s attempt %d", k+1, c.uuid, c.attempt, ev.ID, want)
					}
				case <-t.Context().Done():
					t.Fatal("test ended")
				}
			}
			info := in.settled(t, bus.AgentsStream, id)
			if want := tt.wantAttempts[len(tt.wantAttempts)-1]; info.Delivered.Consumer != uint64(want) {
				t.Errorf("delivered %d times, want %d", info.Delivered.Consumer, want)
			}
			select {
			case c := <-calls:
				t.Errorf("unexpected call: %+v", c)
			default:
			}
		})
	}
}

func TestRetriesStopWhenHandleStops(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	srv := startServer(t, log)
	cfg := testConfig(srv.ClientURL())
	// A retry waits far longer than the test may take, and so would the
	// handler's context and the drain: Handle can return in time only if
	// stopping ends the retry's wait.
	cfg.RetryMin, cfg.RetryMax = time.Hour, time.Hour
	cfg.AckWait, cfg.DrainTimeout = 2*waitTimeout, 2*waitTimeout
	b := connectBus(t, cfg, log)
	in := inspect(t, srv.ClientURL())
	topic := agentTopic(t, "r")
	publishEvents(t, b, topic, event("agent-r", 1, `{}`))

	calls := make(chan int, 10)
	stop := handling(t, b, topic, "agent-r", func(ctx context.Context, m *message.Message) error {
		calls <- bus.Attempt(m)
		return errors.New("transient failure")
	})
	<-calls
	stop() // fails the test if Handle does not return

	if n := len(calls); n != 0 {
		t.Errorf("%d more calls after the first, want none: the retry waits an hour", n)
	}
	// Handed back, not acked.
	if info := in.consumer(t, bus.AgentsStream, "agent-r"); info.AckFloor.Stream != 0 {
		t.Errorf("ack floor %d: the failed message was acked", info.AckFloor.Stream)
	}
}

func TestAgentTopicsAreIsolated(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	srv := startServer(t, log)
	b := connectBus(t, testConfig(srv.ClientURL()), log)
	in := inspect(t, srv.ClientURL())

	var forA, forB []eventstore.RecordedEvent
	for i := range 5 {
		forA = append(forA, event("agent-a", uint64(2*i+1), `"a"`))
		forB = append(forB, event("agent-b", uint64(2*i+2), `"b"`))
	}
	// Interleaved, and a report: neither agent may see the others'.
	for i := range forA {
		publishEvents(t, b, agentTopic(t, "a"), forA[i])
		publishEvents(t, b, agentTopic(t, "b"), forB[i])
	}
	publishEvents(t, b, reportTopic(t, "a"), event("agent-a", 99, `"report"`))

	gotA, gotB := make(chan delivery, 20), make(chan delivery, 20)
	handling(t, b, agentTopic(t, "a"), "agent-a", recorder(gotA))
	handling(t, b, agentTopic(t, "b"), "agent-b", recorder(gotB))
	assertIDs(t, receive(t, gotA, 5), forA)
	assertIDs(t, receive(t, gotB, 5), forB)
	for _, durable := range []string{"agent-a", "agent-b"} {
		if info := in.settled(t, bus.AgentsStream, durable); info.Delivered.Consumer != 5 {
			t.Errorf("%s: %d deliveries, want 5", durable, info.Delivered.Consumer)
		}
	}
}

func TestSecondProcessJoinsThroughTheURL(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	// Listening on every interface, as `cairn dev` does for remote agents.
	srv := bustest.Start(t, log, func(o *natsembed.Options) { o.Host = "0.0.0.0" })
	serverCfg := testConfig(srv.ClientURL())
	serverCfg.CredentialsFile = srv.ManagerCredentials(t)
	serverCfg.CAFile = srv.CAFile
	server := connectBus(t, serverCfg, log)
	if err := server.EnsureAgentConsumer(t.Context(), "remote"); err != nil {
		t.Fatal(err)
	}

	// The agent dials the machine's own address, as another machine
	// would; loopback when the machine has no other.
	host := nonLoopbackIPv4()
	remoteURL := fmt.Sprintf("nats://%s:%d", host, srv.Port())
	t.Logf("agent connects to %s", remoteURL)
	agentCfg := testConfig(remoteURL)
	agentCfg.ClientName = "cairn-agent-remote"
	agentCfg.AgentID = "remote"
	agentCfg.CAFile = srv.CAFile
	agentCfg.CredentialsFile, _ = srv.AgentCredentials(t, "remote")
	agent := connectBus(t, agentCfg, log)

	// Server → agent: an allocation.
	topic := agentTopic(t, "remote")
	alloc := event("agent-remote", 1, `{"kernel":"k-9"}`)
	publishEvents(t, server, topic, alloc)
	got := make(chan delivery, 1)
	handling(t, agent, topic, "agent-remote", recorder(got))
	assertIDs(t, receive(t, got, 1), []eventstore.RecordedEvent{alloc})

	// Agent → server: a report.
	report := message.NewMessage(uuid.NewString(), []byte(`{"kernel":"k-9","state":"started"}`))
	report.Metadata.Set(bus.MetaType, "kernel.started")
	if err := agent.Publish(t.Context(), reportTopic(t, "remote"), report); err != nil {
		t.Fatal(err)
	}
	reports := make(chan *message.Message, 1)
	handling(t, server, bus.ReportsTopic, "server-reports", func(_ context.Context, m *message.Message) error {
		reports <- m
		return nil
	})
	select {
	case m := <-reports:
		if sender, _ := bus.ReportSender(m); sender != "remote" {
			t.Errorf("report sender = %q, want remote", sender)
		}
		if m.UUID != report.UUID || string(m.Payload) != string(report.Payload) || m.Metadata.Get(bus.MetaType) != "kernel.started" {
			t.Errorf("report = %s %s %v, want %s %s", m.UUID, m.Payload, m.Metadata, report.UUID, report.Payload)
		}
	case <-t.Context().Done():
	}
}

func TestReplicasShareADurable(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	srv := startServer(t, log)
	b1 := connectBus(t, testConfig(srv.ClientURL()), log)
	b2 := connectBus(t, testConfig(srv.ClientURL()), log)
	in := inspect(t, srv.ClientURL())

	var reports []eventstore.RecordedEvent
	for i := range 20 {
		reports = append(reports, event("agent-x", uint64(i+1), `{}`))
	}
	got := make(chan delivery, 40)
	handling(t, b1, bus.ReportsTopic, "server", recorder(got))
	handling(t, b2, bus.ReportsTopic, "server", recorder(got))
	publishEvents(t, b1, reportTopic(t, "x"), reports...)

	ds := receive(t, got, len(reports))
	sortByPosition(ds)
	assertIDs(t, ds, reports)
	if info := in.settled(t, bus.ReportsStream, "server"); info.Delivered.Consumer != uint64(len(reports)) {
		t.Errorf("%d deliveries, want %d: each report to one replica", info.Delivered.Consumer, len(reports))
	}
}

func TestDurableNameConsumesOneTopic(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	srv := startServer(t, log)
	b := connectBus(t, testConfig(srv.ClientURL()), log)

	// The consumer exists once a message went through it.
	publishEvents(t, b, agentTopic(t, "one"), event("agent-one", 1, `{}`))
	got := make(chan delivery, 1)
	stop := handling(t, b, agentTopic(t, "one"), "shared-name", recorder(got))
	receive(t, got, 1)
	stop()

	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	err := b.Handle(ctx, agentTopic(t, "two"), "shared-name", recorder(got))
	if !errors.Is(err, domain.ErrConflict) {
		t.Errorf("Handle with a durable of another topic: err = %v, want conflict", err)
	}
}

func TestPublishRefusesBadInput(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	srv := startServer(t, log)
	b := connectBus(t, testConfig(srv.ClientURL()), log)
	topic := agentTopic(t, "v")
	withMeta := func(k, v string) *message.Message {
		m := message.NewMessage(uuid.NewString(), []byte(`{}`))
		m.Metadata.Set(k, v)
		return m
	}
	tests := []struct {
		name  string
		topic string
		msg   *message.Message
	}{
		{"not a Cairn topic", "other.topic", message.NewMessage(uuid.NewString(), nil)},
		{"wildcard topic", "cairn.agent.*", message.NewMessage(uuid.NewString(), nil)},
		{"nested agent topic", "cairn.agent.a.b", message.NewMessage(uuid.NewString(), nil)},
		{"UUID not a UUID", topic, message.NewMessage("msg-1", nil)},
		{"nil UUID", topic, message.NewMessage(uuid.Nil.String(), nil)},
		{"nil message", topic, nil},
		{"reserved header", topic, withMeta("Nats-Msg-Id", "x")},
		{"attempt header", topic, withMeta(bus.MetaAttempt, "7")},
		{"header with colon", topic, withMeta("a:b", "x")},
		{"value with newline", topic, withMeta("k", "a\r\nNats-Expected-Stream: X")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := b.Publish(t.Context(), tt.topic, tt.msg)
			if !errors.Is(err, domain.ErrInvalid) {
				t.Errorf("err = %v, want invalid", err)
			}
		})
	}
}

func TestConnectChecksTheServer(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	tests := []struct {
		name string
		opts server.Options
		want error
	}{
		{"default max_payload of 1 MiB", server.Options{JetStream: true}, domain.ErrInvalid},
		{"no JetStream", server.Options{MaxPayload: 4 << 20}, domain.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			opts.Host, opts.Port, opts.NoSigs, opts.NoLog = "127.0.0.1", server.RANDOM_PORT, true, true
			opts.StoreDir = t.TempDir()
			ns, err := server.NewServer(&opts)
			if err != nil {
				t.Fatal(err)
			}
			ns.Start()
			t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
			if !ns.ReadyForConnections(waitTimeout) {
				t.Fatal("server not ready")
			}
			_, err = bus.Connect(t.Context(), testConfig(ns.ClientURL()), log)
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			t.Log(err)
		})
	}

	t.Run("nobody listening", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		_, err = bus.Connect(t.Context(), testConfig("nats://"+addr), log)
		if !errors.Is(err, domain.ErrUnavailable) {
			t.Errorf("err = %v, want unavailable", err)
		}
	})

	t.Run("bad config", func(t *testing.T) {
		t.Parallel()
		_, err := bus.Connect(t.Context(), bus.Config{}, log)
		if !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("err = %v, want invalid", err)
		}
	})
}

func TestMessagesSurviveAnEmbeddedServerRestart(t *testing.T) {
	t.Parallel()
	log := testLog(t)
	dir := t.TempDir()
	srv, err := natsembed.Start(t.Context(), natsembed.Options{StoreDir: dir, Logger: log, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bus.Connect(t.Context(), testConfig(srv.ClientURL()), log)
	if err != nil {
		t.Fatal(err)
	}
	ev := event("agent-p", 1, `"kept"`)
	publishEvents(t, b, agentTopic(t, "p"), ev)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	srv.Shutdown()

	srv = startServerIn(t, dir, log)
	b = connectBus(t, testConfig(srv.ClientURL()), log)
	got := make(chan delivery, 1)
	handling(t, b, agentTopic(t, "p"), "agent-p", recorder(got))
	assertIDs(t, receive(t, got, 1), []eventstore.RecordedEvent{ev})
}
