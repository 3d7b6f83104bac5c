package devserver

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/busauth"
)

// TestBusBeyondLoopbackIsAuthenticatedAndEncrypted starts the server with
// its bus on every interface, as for agents on other machines: anonymous
// clients are refused, a client that does not trust the bus's CA cannot
// connect, and an agent with credentials issued from the data directory's
// keys and the CA certificate connects over TLS.
func TestBusBeyondLoopbackIsAuthenticatedAndEncrypted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.NATSListen = "0.0.0.0:0"
	r := start(t, cfg)
	url := r.endpoints.BusURL

	if nc, err := nats.Connect(url, nats.RootCAs(filepath.Join(dir, busKeysDir, busauth.CAFile)), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("an anonymous client connected")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("anonymous client: %v, want an authorization violation", err)
	}

	keys, err := busauth.LoadOrCreateKeys(filepath.Join(dir, busKeysDir))
	if err != nil {
		t.Fatal(err)
	}
	creds, _, err := keys.AgentCredentials("remote-1")
	if err != nil {
		t.Fatal(err)
	}
	credsFile := filepath.Join(t.TempDir(), "remote-1.creds")
	if err := busauth.WriteSecretFile(credsFile, creds); err != nil {
		t.Fatal(err)
	}
	if nc, err := nats.Connect(url, nats.UserCredentials(credsFile), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("connected without verifying the bus's certificate")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	agent, err := bus.Connect(ctx, bus.Config{URL: url, AgentID: "remote-1", CredentialsFile: credsFile,
		CAFile: filepath.Join(dir, busKeysDir, busauth.CAFile)}, nil)
	if err != nil {
		t.Fatalf("agent with credentials and the CA: %v", err)
	}
	defer agent.Close()
	topic, _ := bus.ReportTopic("remote-1")
	now := time.Now().UTC()
	msg, err := protocol.NewMessage(protocol.AgentHeartbeat{AgentID: "remote-1", IntervalMillis: 10000, StartedAt: now, At: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.Publish(ctx, topic, msg); err != nil {
		t.Fatalf("the agent cannot report: %v", err)
	}
}
