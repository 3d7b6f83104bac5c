package webuibench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/cairnhq/cairn/infra/devserver"
)

// ServerConfig says where the benchmarked server keeps its data.
type ServerConfig struct {
	// Store is the event store's DSN; empty means SQLite in DataDir, as
	// `cairn dev` does.
	Store string
	// DataDir is the server's data directory (required).
	DataDir string
	// Logger receives the server's logs (default: warnings and errors to
	// stderr).
	Logger *slog.Logger
	// ReadyTimeout bounds the start (default 10m: a restart on a grown
	// store waits for the projectors to catch up with the log).
	ReadyTimeout time.Duration
}

// Server is a `cairn dev` running in this process for the benchmark.
type Server struct {
	// URL is the API's (and the Web-UI's) base URL.
	URL string
	// Token is the bootstrap superadmin's bearer token.
	Token string

	cancel context.CancelFunc
	done   chan error
}

// StartServer starts the server and waits until it serves; Stop ends it.
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("webuibench: no data directory")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = 10 * time.Minute
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
		s.URL, s.Token = e.APIURL, e.Token
		return s, nil
	case err := <-s.done:
		s.done <- err
		return nil, errors.Join(fmt.Errorf("webuibench: cairn dev: %w", err), s.Stop())
	case <-timeout.C:
		return nil, errors.Join(fmt.Errorf("webuibench: cairn dev not serving after %s", cfg.ReadyTimeout), s.Stop())
	case <-ctx.Done():
		return nil, errors.Join(ctx.Err(), s.Stop())
	}
}

// Stop ends the server and returns what went wrong while it stopped.
func (s *Server) Stop() error {
	s.cancel()
	return <-s.done
}

// decodeJSON is json.Unmarshal with the benchmark's error wording.
func decodeJSON(raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("webuibench: %w", err)
	}
	return nil
}
