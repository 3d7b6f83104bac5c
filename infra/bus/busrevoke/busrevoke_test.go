package busrevoke_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/auth/token"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/bus/busrevoke"
	"github.com/cairnhq/cairn/infra/bus/bustest"
)

var (
	quiet = slog.New(slog.NewTextHandler(io.Discard, nil))
	root  = commands.Principal{Role: domain.RoleSuperadmin, Domain: "default"}
)

// enrolled records agentID's enrollment of userKey through the commands.
func enrolled(t *testing.T, h *commands.Handlers, agentID, userKey string) {
	t.Helper()
	ctx, md := t.Context(), commands.Metadata{Actor: "test"}
	digest := token.Of(agentID + userKey).String()
	if _, err := h.OfferAgentEnrollment.Handle(ctx, md, commands.OfferAgentEnrollment{Actor: root, AgentID: agentID,
		Digest: digest, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.EnrollAgent.Handle(ctx, md, commands.EnrollAgent{AgentID: agentID, Digest: digest, UserKey: userKey}); err != nil {
		t.Fatal(err)
	}
}

func revoke(t *testing.T, h *commands.Handlers, agentID string) {
	t.Helper()
	if _, err := h.RevokeAgentEnrollment.Handle(t.Context(), commands.Metadata{Actor: "test"},
		commands.RevokeAgentEnrollment{Actor: root, AgentID: agentID}); err != nil {
		t.Fatal(err)
	}
}

// A key revoked before the follower starts is refused once it has caught
// up; one revoked while it runs is disconnected; stopping returns nil.
func TestFollowerRevokesKeysOnTheRunningServer(t *testing.T) {
	t.Parallel()
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "events.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h, err := commands.NewHandlers(store, time.Now, commands.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := bustest.Start(t, quiet)
	credsA, keyA := srv.AgentCredentials(t, "a")
	credsB, keyB := srv.AgentCredentials(t, "b")
	enrolled(t, h, "a", keyA)
	enrolled(t, h, "b", keyB)
	revoke(t, h, "a")

	f, err := busrevoke.New(busrevoke.Config{Logger: quiet}, store, srv.Keys, srv.Server)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	select {
	case <-f.CaughtUp():
	case err := <-done:
		t.Fatalf("Run returned before catching up: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("not caught up after 30s")
	}
	if nc, err := nats.Connect(srv.ClientURL(), nats.UserCredentials(credsA), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("a key revoked before the start connected")
	}
	closed := make(chan struct{})
	nc, err := nats.Connect(srv.ClientURL(), nats.UserCredentials(credsB), nats.MaxReconnects(0),
		nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		t.Fatalf("a key not revoked: %v", err)
	}
	defer nc.Close()

	revoke(t, h, "b")
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("a key revoked while running is still connected")
	}
	// The server may close the connection before Applied is updated.
	await.Until(t, 10*time.Second, "2 revoked keys applied", func() bool { return f.Applied() == 2 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
}

func TestNewRefusesMissingParts(t *testing.T) {
	t.Parallel()
	if _, err := busrevoke.New(busrevoke.Config{}, nil, nil, nil); err == nil {
		t.Fatal("New accepted no log, keys or server")
	}
}
