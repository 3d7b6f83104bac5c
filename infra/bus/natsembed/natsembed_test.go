package natsembed_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/busauth"
	"github.com/cairnhq/cairn/infra/bus/natsembed"
	"github.com/cairnhq/cairn/infra/tmpfstest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestStartOnAFreePortWithJetStream(t *testing.T) {
	t.Parallel()
	srv, err := natsembed.Start(t.Context(), natsembed.Options{StoreDir: t.TempDir(), Logger: quiet, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Port() <= 0 {
		t.Fatalf("port %d", srv.Port())
	}
	if want := fmt.Sprintf("nats://127.0.0.1:%d", srv.Port()); srv.ClientURL() != want {
		t.Errorf("ClientURL() = %q, want %q", srv.ClientURL(), want)
	}

	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if got := nc.MaxPayload(); got != natsembed.DefaultMaxPayload || got < bus.MaxMessageSize {
		t.Errorf("max payload %d, want %d (at least bus.MaxMessageSize %d)", got, natsembed.DefaultMaxPayload, bus.MaxMessageSize)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AccountInfo(t.Context()); err != nil {
		t.Errorf("JetStream: %v", err)
	}

	srv.Shutdown()
	srv.Shutdown() // idempotent
	if _, err := nats.Connect(srv.ClientURL(), nats.MaxReconnects(0)); err == nil {
		t.Error("connected after Shutdown")
	}
}

func TestStartOnAGivenAddress(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()

	keys, err := busauth.LoadOrCreateKeys(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	trust, err := keys.Trust(nil)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := keys.ManagerCredentials("test")
	if err != nil {
		t.Fatal(err)
	}
	credsFile := filepath.Join(t.TempDir(), "manager.creds")
	if err := busauth.WriteSecretFile(credsFile, creds); err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := busauth.LoadOrCreateServerTLS(filepath.Join(t.TempDir(), "tls"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Every interface: only with authentication and TLS.
	srv, err := natsembed.Start(t.Context(), natsembed.Options{Host: "0.0.0.0", Port: port, StoreDir: t.TempDir(), Logger: quiet, Auth: &trust, TLS: tlsCfg.Config})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	// Listening on every interface: local clients use loopback.
	if want := fmt.Sprintf("nats://127.0.0.1:%d", port); srv.ClientURL() != want || srv.Port() != port {
		t.Errorf("ClientURL() = %q, Port() = %d; want %q", srv.ClientURL(), srv.Port(), want)
	}
	if nc, err := nats.Connect(srv.ClientURL()); err == nil {
		nc.Close()
		t.Error("an anonymous client connected")
	}
	// Without the CA, the client does not trust the server.
	if nc, err := nats.Connect(srv.ClientURL(), nats.UserCredentials(credsFile)); err == nil {
		nc.Close()
		t.Error("connected without verifying the server's certificate")
	}
	nc, err := nats.Connect(srv.ClientURL(), nats.UserCredentials(credsFile), nats.RootCAs(tlsCfg.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.TLSConnectionState(); err != nil {
		t.Errorf("not a TLS connection: %v", err)
	}
	nc.Close()
}

func TestStartReportsAStoreItCannotUse(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := natsembed.Start(t.Context(), natsembed.Options{StoreDir: file, Logger: quiet, Insecure: true})
	if err == nil {
		srv.Shutdown()
		t.Fatal("started on a store dir that is a file")
	}
	t.Log(err)
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	if err := (natsembed.Options{StoreDir: "/tmp/x", Insecure: true}).Validate(); err != nil {
		t.Errorf("minimal options: %v", err)
	}
	if err := (natsembed.Options{StoreDir: "/tmp/x"}).Validate(); err == nil || !strings.Contains(err.Error(), "auth") {
		t.Errorf("no authentication: %v, want an error about auth", err)
	}
	if err := (natsembed.Options{StoreDir: "/tmp/x", Host: "0.0.0.0", Insecure: true}).Validate(); err == nil || !strings.Contains(err.Error(), "insecure") || !strings.Contains(err.Error(), "tls") {
		t.Errorf("insecure on every interface: %v, want errors about insecure and tls", err)
	}
	err := natsembed.Options{
		Host:       "host:4222",
		Port:       70000,
		MaxPayload: 1 << 20, // NATS's default: too small for an envelope
		MaxMemory:  -1,
	}.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"host", "port", "store dir", "max payload", "max memory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

// A stream whose store found the disk full refuses messages until
// JetStream restarts: the embedded server restarts it once there is room,
// with the stream and the messages it stored, and publishing works again.
func TestJetStreamComesBackAfterAFullDisk(t *testing.T) {
	mnt := tmpfstest.Mount(t, "16m")
	logger := quiet
	if os.Getenv("DEBUGX") != "" {
		logger = slog.Default()
	}
	srv, err := natsembed.Start(t.Context(), natsembed.Options{StoreDir: filepath.Join(mnt, "nats"), Insecure: true, Logger: logger, RecoverInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.ClientURL(), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 64<<10)
	for i := 0; i < 3; i++ {
		if _, err := js.Publish(ctx, "s.x", payload); err != nil {
			t.Fatal(err)
		}
	}

	ballast := tmpfstest.Fill(t, mnt)
	deadline := time.Now().Add(time.Minute)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := js.Publish(pctx, "s.x", payload)
		cancel()
		if err != nil {
			t.Logf("publish on a full disk: %v", err)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("publishing still works a minute after the disk filled up")
		}
	}
	await.Until(t, time.Until(deadline), "the server to report degraded on a full disk", func() bool { return srv.Degraded() != nil })
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	defer func() {
		if t.Failed() {
			t.Logf("last publish after room was made: %v (degraded: %v)", lastErr, srv.Degraded())
		}
	}()
	await.Until(t, time.Until(deadline), "a publish to succeed and the server to recover after room was made", func() bool {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		_, lastErr = js.Publish(pctx, "s.x", payload)
		cancel()
		return lastErr == nil && srv.Degraded() == nil
	})
	st, err := js.Stream(ctx, "S")
	if err != nil {
		t.Fatal(err)
	}
	if n := st.CachedInfo().State.Msgs; n < 4 {
		t.Errorf("the stream holds %d messages after JetStream came back, want at least the 3 before and 1 after", n)
	}
}
