package busauth_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/busauth"
	"github.com/cairnhq/cairn/infra/bus/bustest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// violations collects the permission violations the server reports to one
// connection.
type violations struct {
	mu   sync.Mutex
	seen []string
	got  chan struct{}
}

func (v *violations) handler(_ *nats.Conn, _ *nats.Subscription, err error) {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return
	}
	v.mu.Lock()
	v.seen = append(v.seen, err.Error())
	v.mu.Unlock()
	select {
	case v.got <- struct{}{}:
	default:
	}
}

// await waits for a violation that names subject.
func (v *violations) await(t *testing.T, subject string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		v.mu.Lock()
		for _, s := range v.seen {
			if strings.Contains(s, `"`+subject+`"`) {
				v.mu.Unlock()
				return
			}
		}
		v.mu.Unlock()
		select {
		case <-v.got:
		case <-deadline:
			t.Fatalf("no permissions violation for %q; seen: %v", subject, v.seen)
		}
	}
}

type env struct {
	srv          *bustest.Server
	mgr          *bus.Bus
	credsA       string
	credsB       string
	keyA         string
	secretToB    string
	reportsFromA chan string
}

// setUp starts an authenticated server, a manager that provisioned the
// streams and both agents' consumers, and one secret message on agent b's
// topic.
func setUp(t *testing.T) *env {
	t.Helper()
	e := &env{srv: bustest.Start(t, quiet), secretToB: "API_KEY=s3cr3t-for-b", reportsFromA: make(chan string, 16)}
	var err error
	e.mgr, err = bus.Connect(t.Context(), bus.Config{URL: e.srv.ClientURL(), CredentialsFile: e.srv.ManagerCredentials(t),
		RetryMin: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond}, quiet)
	if err != nil {
		t.Fatalf("manager connect: %v", err)
	}
	t.Cleanup(func() { e.mgr.Close() })
	for _, id := range []string{"a", "b"} {
		if err := e.mgr.EnsureAgentConsumer(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	e.credsA, e.keyA = e.srv.AgentCredentials(t, "a")
	e.credsB, _ = e.srv.AgentCredentials(t, "b")
	topicB, _ := bus.AgentTopic("b")
	if err := e.mgr.Publish(t.Context(), topicB, message.NewMessage("0190b5a2-0000-7000-8000-000000000001", []byte(e.secretToB))); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- e.mgr.Handle(ctx, bus.ReportsTopic, "manager", func(_ context.Context, m *message.Message) error {
			sender, _ := bus.ReportSender(m)
			e.reportsFromA <- sender + ":" + string(m.Payload)
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager handle: %v", err)
		}
	})
	return e
}

// raw connects with creds (none: anonymous) as a plain NATS client.
func (e *env) raw(t *testing.T, creds string, v *violations) (*nats.Conn, error) {
	t.Helper()
	opts := []nats.Option{nats.Timeout(5 * time.Second), nats.MaxReconnects(0)}
	if creds != "" {
		opts = append(opts, nats.UserCredentials(creds))
	}
	if v != nil {
		opts = append(opts, nats.ErrorHandler(v.handler))
	}
	nc, err := nats.Connect(e.srv.ClientURL(), opts...)
	if err == nil {
		t.Cleanup(nc.Close)
	}
	return nc, err
}

func TestAnonymousAndForgedCredentialsAreRefused(t *testing.T) {
	t.Parallel()
	e := setUp(t)
	if _, err := e.raw(t, "", nil); !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("anonymous connection: %v, want an authorization violation", err)
	}
	// Credentials for agent a signed by another installation's keys.
	other, err := busauth.LoadOrCreateKeys(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	forged, _, err := other.AgentCredentials("a")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "forged.creds")
	if err := busauth.WriteSecretFile(path, forged); err != nil {
		t.Fatal(err)
	}
	if _, err := e.raw(t, path, nil); !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("forged credentials: %v, want an authorization violation", err)
	}
}

// TestAgentCannotActAsAnother connects with agent a's credentials and
// tries everything the attack on an open bus did; the server refuses each.
func TestAgentCannotActAsAnother(t *testing.T) {
	t.Parallel()
	e := setUp(t)
	v := &violations{got: make(chan struct{}, 1)}
	nc, err := e.raw(t, e.credsA, v)
	if err != nil {
		t.Fatalf("agent a connects with its credentials: %v", err)
	}
	for _, subject := range []string{
		"cairn.agent.b",                          // a kernel.create or destroy for b
		"cairn.reports.b",                        // a report as b
		"cairn.reports",                          // the old shared topic
		"$JS.API.STREAM.MSG.GET.CAIRN_AGENTS",    // read b's messages from the stream
		"$JS.API.CONSUMER.CREATE.CAIRN_AGENTS.x", // a consumer of its own choosing
		"$JS.API.CONSUMER.DURABLE.CREATE.CAIRN_AGENTS.agent-a",
		"$JS.API.CONSUMER.INFO.CAIRN_AGENTS.agent-b", // look at b's consumer
		"$JS.API.STREAM.UPDATE.CAIRN_AGENTS",
		"$JS.API.STREAM.PURGE.CAIRN_REPORTS",
		"$JS.ACK.CAIRN_AGENTS.agent-b.1.1.1.1.1", // ack b's messages away
	} {
		if err := nc.Publish(subject, []byte("{}")); err != nil {
			t.Fatal(err)
		}
		v.await(t, subject)
	}
	for _, subject := range []string{
		"cairn.agent.b", "cairn.>", ">", "_CAIRN.deliver.CAIRN_AGENTS.agent-b", "_INBOX.>", "_INBOX.b.>",
	} {
		if _, err := nc.SubscribeSync(subject); err != nil {
			t.Fatal(err)
		}
		v.await(t, subject)
	}
}

// TestAgentDoesItsOwnWork is the positive control: with its credentials an
// agent reports as itself (the manager reads the sender from the subject)
// and receives its own topic, and nothing of another agent's.
func TestAgentDoesItsOwnWork(t *testing.T) {
	t.Parallel()
	e := setUp(t)
	agent, err := bus.Connect(t.Context(), bus.Config{URL: e.srv.ClientURL(), CredentialsFile: e.credsA, AgentID: "a",
		RetryMin: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond}, quiet)
	if err != nil {
		t.Fatalf("agent connect: %v", err)
	}
	defer agent.Close()
	topic, _ := bus.ReportTopic("a")
	if err := agent.Publish(t.Context(), topic, message.NewMessage("0190b5a2-0000-7000-8000-000000000002", []byte("hello"))); err != nil {
		t.Fatalf("agent a reports: %v", err)
	}
	select {
	case got := <-e.reportsFromA:
		if got != "a:hello" {
			t.Errorf("manager got %q, want a:hello", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the manager got no report")
	}
	// A cannot publish to b's reports topic through the bus either.
	topicB, _ := bus.ReportTopic("b")
	pctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := agent.Publish(pctx, topicB, message.NewMessage("0190b5a2-0000-7000-8000-000000000003", []byte("forged"))); !errors.Is(err, domain.ErrForbidden) {
		t.Errorf("agent a published a report as b: %v, want forbidden (the server refuses it too: TestAgentCannotActAsAnother)", err)
	}

	// Its own topic: a message for a arrives; b's secret never does.
	own, _ := bus.AgentTopic("a")
	if err := e.mgr.Publish(t.Context(), own, message.NewMessage("0190b5a2-0000-7000-8000-000000000004", []byte("for-a"))); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- agent.Handle(ctx, own, bus.AgentDurable("a"), func(_ context.Context, m *message.Message) error {
			got <- string(m.Payload)
			return nil
		})
	}()
	select {
	case p := <-got:
		if p != "for-a" {
			t.Errorf("agent a received %q", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("agent a received nothing on its topic")
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("agent handle: %v", err)
	}
	if err := agent.Handle(t.Context(), "cairn.agent.b", bus.AgentDurable("b"), func(context.Context, *message.Message) error { return nil }); !errors.Is(err, domain.ErrForbidden) {
		t.Errorf("agent a consumed b's topic: %v, want forbidden", err)
	}
}

// TestRevokedAgentIsDisconnected revokes agent a's key on the running
// server: its connection ends and it cannot come back.
func TestRevokedAgentIsDisconnected(t *testing.T) {
	t.Parallel()
	e := setUp(t)
	closed := make(chan struct{})
	nc, err := nats.Connect(e.srv.ClientURL(), nats.UserCredentials(e.credsA), nats.MaxReconnects(0),
		nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// JWTs carry whole seconds: revoke from a second after issue.
	accJWT, err := e.srv.Keys.AccountJWT(map[string]time.Time{e.keyA: time.Now().Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.srv.UpdateAccount(accJWT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the revoked agent stayed connected")
	}
	if _, err := e.raw(t, e.credsA, nil); err == nil {
		t.Error("the revoked agent connected again")
	}
	if _, err := e.raw(t, e.credsB, nil); err != nil {
		t.Errorf("agent b was refused after a's revocation: %v", err)
	}
}
