package proxyserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore/dsn"
	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/agentlogs"
	"github.com/cairnhq/cairn/infra/appproxy"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/busauth"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/readmodels"
	"github.com/cairnhq/cairn/projections/sessions"
	"github.com/cairnhq/cairn/web"
)

// readPoolConns bounds the read-only pool: one route lookup per request,
// each a single indexed read.
const readPoolConns = 8

// shutdownTimeout bounds the wait for requests in flight at stop.
const shutdownTimeout = 10 * time.Second

// expiryWarning is how long before its agent key's grant ends the proxy
// warns at start.
const expiryWarning = 14 * 24 * time.Hour

// addressesFile keeps, in DataDir, the agents' endpoints learned from the
// bus.
const addressesFile = "agent-addresses.json"

// Durable is the name of the durable consumer of the reports of the
// proxy named name: its bus credentials allow that one
// (busauth.Keys.AppProxyCredentials).
func Durable(name string) string { return "app-proxy-" + name }

// Run serves the app proxy until ctx ends. It returns once every part it
// started has stopped.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.WithDefaults()
	log := cfg.Logger.With("component", "cairn-proxy")
	log.Info("configuration", "config", cfg.logValue())

	grantKey, err := readGrantKey(cfg.GrantKeyFile)
	if err != nil {
		return err
	}
	keys, err := appproxy.NewKeyring(grantKey)
	if err != nil {
		return err
	}
	signing, expires, err := busauth.LoadAppProxyKey(cfg.AgentKeyFile)
	if err != nil {
		return fmt.Errorf("agent key: %w", err)
	}
	if left := time.Until(expires); left <= 0 {
		return fmt.Errorf("agent key %s: its grant expired at %s (cairn bus app-proxy-key issues a new one)", cfg.AgentKeyFile, expires.UTC().Format(time.RFC3339))
	} else if left < expiryWarning {
		log.Warn("the agent key's grant expires soon: agents will refuse this proxy then (cairn bus app-proxy-key issues a new one)", "expires", expires.UTC())
	}

	db, pool, err := readmodels.OpenReadOnly(ctx, cfg.Store, readPoolConns)
	if err != nil {
		return err
	}
	defer pool.Close()
	pgURL, pgOpts, err := dsn.ParsePostgres(cfg.Store)
	if err != nil {
		return err
	}
	pgOpts.MaxConns, pgOpts.TailEvents = 2, -1
	store, err := postgres.Open(ctx, pgURL, pgOpts)
	if err != nil {
		return fmt.Errorf("open the event store (for the audit trail): %w", err)
	}
	defer store.Close()

	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	book, err := agentlogs.OpenAddressBook(filepath.Join(cfg.DataDir, addressesFile), cfg.Logger)
	if err != nil {
		return err
	}
	durable := Durable(cfg.Name)
	b, err := bus.Connect(ctx, bus.Config{URL: cfg.BusURL, ClientName: "cairn-proxy-" + cfg.Name,
		CredentialsFile: cfg.BusCredentialsFile, CAFile: cfg.BusCAFile, SkipProvisioning: true,
		InboxPrefix: bus.ReaderInboxPrefix(durable)}, cfg.Logger)
	if err != nil {
		return err
	}
	defer b.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	access, err := accesslog.NewWriter(accesslog.Config{Logger: cfg.Logger, Registerer: reg}, store)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	public, err := publicURL(cfg, ln.Addr())
	if err != nil {
		ln.Close()
		return err
	}
	p, err := appproxy.New(appproxy.Config{
		Keys: keys, Routes: appproxy.SessionRoutes{Sessions: sessions.New(db)}, Agents: book,
		Sign: func(req *http.Request, agentID string) error {
			return signing.SignAgentRequest(req, agentID, time.Now())
		},
		Record:       func(ctx context.Context, rec audit.Record) error { return access.Write(ctx, rec) },
		Logger:       cfg.Logger,
		CookieSecure: public.Scheme == "https",
		PublicHost:   public.Host,
		Registerer:   reg,
		TerminalPage: web.TerminalPage(),
		Domain:       cfg.Domain,
	})
	if err != nil {
		ln.Close()
		return err
	}
	lln, err := httpapi.NewListener(ln, httpapi.ListenerConfig{Name: "app-proxy", MaxConns: cfg.HTTPMaxConns,
		MaxConnsPerIP: cfg.HTTPMaxConnsPerIP, Logger: cfg.Logger, Registerer: reg})
	if err != nil {
		ln.Close()
		return err
	}
	if cfg.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
		if err != nil {
			lln.Close()
			return fmt.Errorf("tls: %w", err)
		}
		lln = tls.NewListener(lln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}

	var metricsLn net.Listener
	if cfg.MetricsListen != "off" {
		if metricsLn, err = net.Listen("tcp", cfg.MetricsListen); err != nil {
			lln.Close()
			return fmt.Errorf("metrics listen: %w", err)
		}
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 4)
	parts := 0
	start := func(name string, run func(context.Context) error) {
		parts++
		go func() {
			err := run(runCtx)
			if err != nil && runCtx.Err() == nil {
				err = fmt.Errorf("%s: %w", name, err)
				cancel()
			} else {
				err = nil
			}
			done <- err
		}()
	}
	start("access log", access.Run)
	start("agent addresses", func(ctx context.Context) error {
		return book.Run(ctx, b, durable)
	})
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: httpapi.DefaultIdleTimeout,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	start("app proxy", func(ctx context.Context) error { return serve(ctx, srv, lln) })
	metricsAddr := ""
	if metricsLn != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
		msrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		metricsAddr = metricsLn.Addr().String()
		start("metrics", func(ctx context.Context) error { return serve(ctx, msrv, metricsLn) })
	}
	log.Info("app proxy serving", "listen", ln.Addr().String(), "url", public.String(), "domain", cfg.Domain, "metrics", metricsAddr)
	if cfg.Ready != nil {
		cfg.Ready(public.String(), metricsAddr)
	}
	var errs []error
	for range parts {
		if err := <-done; err != nil {
			errs = append(errs, err)
		}
	}
	p.CloseIdle() // the tunnels to the agents
	log.Info("app proxy stopped")
	return errors.Join(errs...)
}

// serve runs srv on ln until ctx ends, then shuts it down. Upgraded
// connections (terminals, notebooks) are not waited for: the browser
// reconnects to whichever proxy serves next.
func serve(ctx context.Context, srv *http.Server, ln net.Listener) error {
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// publicURL is Config.PublicURL, or the bound address's URL.
func publicURL(cfg Config, addr net.Addr) (*url.URL, error) {
	raw := cfg.PublicURL
	if raw == "" {
		scheme := "http"
		if cfg.TLSCertFile != "" {
			scheme = "https"
		}
		raw = scheme + "://" + loopbackAddr(addr)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("public url: %w", err)
	}
	u.Path = ""
	return u, nil
}

// loopbackAddr is addr, with 127.0.0.1 for an unspecified IP.
func loopbackAddr(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}

// readGrantKey reads the grant key file, which must exist: a key made up
// here would match no ticket the API mints.
func readGrantKey(path string) ([]byte, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("grant key: %w (the API's key file: cairn dev keeps it in <data-dir>/app-proxy.key, or use --app-proxy-key)", err)
	}
	return appproxy.LoadOrCreateKey(path)
}

// logValue is the configuration as logged at start: no secret is in it
// (the files' contents are not), the store's password is redacted.
func (c Config) logValue() slog.Value {
	return slog.GroupValue(
		slog.String("listen", c.Listen), slog.String("public_url", c.PublicURL), slog.String("domain", c.Domain),
		slog.String("store", redact(c.Store)), slog.String("grant_key_file", c.GrantKeyFile),
		slog.String("agent_key_file", c.AgentKeyFile), slog.String("bus", redact(c.BusURL)),
		slog.String("bus_credentials", c.BusCredentialsFile), slog.String("name", c.Name),
		slog.String("data_dir", c.DataDir), slog.String("metrics_listen", c.MetricsListen),
		slog.Bool("tls", c.TLSCertFile != ""), slog.Bool("behind_tls", c.BehindTLS))
}
