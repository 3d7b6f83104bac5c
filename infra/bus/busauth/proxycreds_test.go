package busauth_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/busauth"
)

// An app proxy's bus credentials read the reports through its own
// consumer, and do nothing a manager or an agent does.
func TestAppProxyReadsReportsOnly(t *testing.T) {
	t.Parallel()
	e := setUp(t)
	const durable = "app-proxy-test"
	raw, err := e.srv.Keys.AppProxyCredentials(durable)
	if err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(t.TempDir(), "proxy.creds")
	if err := busauth.WriteSecretFile(creds, raw); err != nil {
		t.Fatal(err)
	}

	// It reads a report an agent sent, through the consumer it creates.
	agent, err := bus.Connect(t.Context(), bus.Config{URL: e.srv.ClientURL(), AgentID: "a", CredentialsFile: e.credsA}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if err := agent.Publish(t.Context(), "cairn.reports.a", message.NewMessage("0190b5a2-0000-7000-8000-0000000000a1", []byte("hello"))); err != nil {
		t.Fatal(err)
	}
	proxy, err := bus.Connect(t.Context(), bus.Config{URL: e.srv.ClientURL(), CredentialsFile: creds, SkipProvisioning: true,
		InboxPrefix: bus.ReaderInboxPrefix(durable), RetryMin: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond}, quiet)
	if err != nil {
		t.Fatalf("the proxy connects with its credentials: %v", err)
	}
	defer proxy.Close()
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan string, 4)
	done := make(chan error, 1)
	go func() {
		done <- proxy.Handle(ctx, bus.ReportsTopic, durable, func(_ context.Context, m *message.Message) error {
			got <- string(m.Payload)
			return nil
		})
	}()
	select {
	case p := <-got:
		if p != "hello" {
			t.Fatalf("the proxy read %q", p)
		}
	case err := <-done:
		t.Fatalf("the proxy's consumer: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the proxy read no report")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("the proxy's consumer: %v", err)
	}

	// And nothing else.
	v := &violations{got: make(chan struct{}, 1)}
	nc, err := e.raw(t, creds, v)
	if err != nil {
		t.Fatal(err)
	}
	for _, subject := range []string{
		"cairn.agent.a", "cairn.reports.a", "$JS.API.STREAM.MSG.GET.CAIRN_AGENTS",
		"$JS.API.CONSUMER.CREATE.CAIRN_AGENTS.x", "$JS.API.CONSUMER.CREATE.CAIRN_REPORTS.manager",
		"$JS.API.CONSUMER.DELETE.CAIRN_REPORTS.manager", "$JS.API.STREAM.PURGE.CAIRN_REPORTS",
		"$JS.ACK.CAIRN_REPORTS.manager.1.1.1.1.1",
	} {
		if err := nc.Publish(subject, []byte("{}")); err != nil {
			t.Fatal(err)
		}
		v.await(t, subject)
	}
	for _, subject := range []string{"cairn.>", "_INBOX.>", "_CAIRN.deliver.CAIRN_AGENTS.agent-a", "_CAIRN.deliver.CAIRN_REPORTS.manager"} {
		if _, err := nc.SubscribeSync(subject); err != nil {
			t.Fatal(err)
		}
		v.await(t, subject)
	}
}
