package apibench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/cairnhq/cairn/infra/bootstrap"
	"github.com/cairnhq/cairn/infra/devserver"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// ServerConfig says where the benchmarked server keeps its data.
type ServerConfig struct {
	// Store is the event store's DSN; empty means SQLite in DataDir, as
	// `cairn dev` does.
	Store string
	// DataDir is the server's data directory (required: the credentials
	// file, NATS, vfolders; the SQLite database unless Store says else).
	DataDir string
	// Logger receives the server's logs (default: warnings and errors to
	// stderr).
	Logger *slog.Logger
	// ReadyTimeout bounds the start and the provisioning (default 2m).
	ReadyTimeout time.Duration
}

// Keypair is the benchmark user's signing keys.
type Keypair struct {
	AccessKey string
	SecretKey string
}

// Server is a `cairn dev` running in this process for the benchmark.
type Server struct {
	// AuditedURL serves the API as `cairn dev` does: every /v1 request
	// is recorded in the audit trail.
	AuditedURL string
	// UnauditedURL serves the same API without the access log
	// (devserver.Endpoints.ServeWithoutAudit).
	UnauditedURL string
	// User is an ordinary user's keypair, provisioned through the API.
	User Keypair

	token  string
	cancel context.CancelFunc
	done   chan error
	// stopUnaudited ends the unaudited API and returns what it returned;
	// nil until it serves.
	stopUnaudited func() error
}

// StartServer starts the server, waits until it serves, and provisions
// the benchmark's user; Stop ends it.
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("apibench: no data directory")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = 2 * time.Minute
	}
	ready := make(chan devserver.Endpoints, 1)
	srvCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Server{cancel: cancel, done: make(chan error, 1)}
	go func() {
		s.done <- devserver.Run(srvCtx, devserver.Config{
			Listen: "127.0.0.1:0", NATSListen: "127.0.0.1:0",
			DataDir: cfg.DataDir, Store: cfg.Store, NoAgent: true,
			ReadyTimeout: cfg.ReadyTimeout, Version: "bench", Logger: cfg.Logger,
			OnReady: func(e devserver.Endpoints) { ready <- e },
		})
	}()
	timeout := time.NewTimer(cfg.ReadyTimeout)
	defer timeout.Stop()
	select {
	case e := <-ready:
		s.AuditedURL, s.token = e.APIURL, e.Token
		if err := s.serveUnaudited(ctx, e); err != nil {
			return nil, errors.Join(fmt.Errorf("apibench: the unaudited API: %w", err), s.Stop())
		}
	case err := <-s.done:
		s.done <- err
		return nil, errors.Join(fmt.Errorf("apibench: cairn dev: %w", err), s.Stop())
	case <-timeout.C:
		return nil, errors.Join(fmt.Errorf("apibench: cairn dev not serving after %s", cfg.ReadyTimeout), s.Stop())
	case <-ctx.Done():
		return nil, errors.Join(ctx.Err(), s.Stop())
	}
	pctx, pcancel := context.WithTimeout(ctx, cfg.ReadyTimeout)
	defer pcancel()
	user, err := s.provision(pctx)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("apibench: provision the user: %w", err), s.Stop())
	}
	s.User = user
	return s, nil
}

// serveUnaudited serves the API without the access log on a free
// loopback port, in this process, until Stop.
func (s *Server) serveUnaudited(ctx context.Context, e devserver.Endpoints) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.UnauditedURL = "http://" + ln.Addr().String()
	uctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- e.ServeWithoutAudit(uctx, ln) }()
	s.stopUnaudited = func() error {
		cancel()
		return <-done
	}
	return nil
}

// Stop ends the server (the unaudited API first: it uses the server's
// parts) and returns what went wrong while it stopped.
func (s *Server) Stop() error {
	var err error
	if s.stopUnaudited != nil {
		err = s.stopUnaudited()
		s.stopUnaudited = nil
	}
	s.cancel()
	return errors.Join(err, <-s.done)
}

// provision makes an ordinary user, a member of the default project, with
// a main keypair, through the audited API (the real commands, each with
// its access record), and waits until a signed request of theirs is
// accepted.
func (s *Server) provision(ctx context.Context) (Keypair, error) {
	var user struct {
		ID string `json:"id"`
	}
	if err := s.admin(ctx, http.MethodPost, "/v1/users", map[string]any{
		"email": "bench-" + rand.Text()[:8] + "@cairn.local", "password": rand.Text(), "full_name": "API benchmark",
	}, &user); err != nil {
		return Keypair{}, err
	}
	if err := s.admin(ctx, http.MethodPut, "/v1/projects/"+bootstrap.DefaultScope+"/members/"+user.ID, nil, nil); err != nil {
		return Keypair{}, err
	}
	var kp struct {
		AccessKey string `json:"access_key"`
		SecretKey string `json:"secret_key"`
	}
	if err := s.admin(ctx, http.MethodPost, "/v1/keypairs", map[string]any{
		"user_id": user.ID, "resource_policy": bootstrap.DefaultScope, "main": true,
	}, &kp); err != nil {
		return Keypair{}, err
	}
	k := Keypair{AccessKey: kp.AccessKey, SecretKey: kp.SecretKey}
	// The keypair is usable once the tenancy read model shows it.
	c := newClient(1)
	for {
		status, err := c.signedGet(ctx, s.UnauditedURL+WhoamiPath, k)
		switch {
		case err != nil:
			return Keypair{}, err
		case status == http.StatusOK:
			return k, nil
		case status != http.StatusUnauthorized:
			return Keypair{}, fmt.Errorf("signed GET %s: status %d", WhoamiPath, status)
		}
		select {
		case <-ctx.Done():
			return Keypair{}, fmt.Errorf("the new keypair is not accepted: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// admin sends a request with the superadmin's bearer token and decodes
// the answer into out (when not nil); any status but 2xx is an error.
func (s *Server) admin(ctx context.Context, method, path string, body, out any) error {
	return httpapi.CallJSON(ctx, http.DefaultClient, method, s.AuditedURL+path, s.token, body, 0, out)
}
