package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/eventstore/dsn"
	"github.com/cairnhq/cairn/infra/config"
)

type devConfig struct {
	Listen  string
	DataDir string
	Store   string
}

func (c devConfig) storeDSN() string {
	if c.Store != "" {
		return c.Store
	}
	return "sqlite://" + filepath.Join(c.DataDir, "cairn.db")
}

// Validate reports every problem at once.
func (c devConfig) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("--listen %q: %w", c.Listen, err))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("--data-dir must not be empty"))
	}
	return errors.Join(errs...)
}

func newDevCommand() *cobra.Command {
	var cfg devConfig
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run Cairn for development in one process, on the embedded SQLite store",
		Long: `dev runs Cairn in one process with its embedded defaults: the event store
is SQLite in --data-dir (or --store names another one). It serves
/healthz and Prometheus /metrics on --listen and stops cleanly on Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.Validate(); err != nil {
				return err
			}
			return runDev(cmd.Context(), cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.Listen, "listen", "127.0.0.1:8080", "HTTP listen address")
	cmd.Flags().StringVar(&cfg.DataDir, "data-dir", "./data", "directory for the embedded store and local state")
	cmd.Flags().StringVar(&cfg.Store, "store", "", "event store DSN (sqlite:///path/cairn.db or postgres://...); default: SQLite in --data-dir")
	return cmd
}

func runDev(ctx context.Context, cfg devConfig) error {
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	slog.Info("starting cairn dev", "version", version, "listen", cfg.Listen, "data_dir", cfg.DataDir, "store", config.RedactDSN(cfg.storeDSN()))
	store, err := dsn.Open(ctx, cfg.storeDSN())
	if err != nil {
		return fmt.Errorf("open event store: %w", err)
	}
	defer store.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok", "version": version})
	})
	mux.Handle("GET /metrics", promhttp.Handler())
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("Cairn is up: http://%s (health: /healthz, metrics: /metrics); Ctrl-C stops it\n", ln.Addr())

	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	slog.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}
