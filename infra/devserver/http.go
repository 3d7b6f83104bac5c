package devserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/commandapi"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/agentlogs"
	"github.com/cairnhq/cairn/infra/appproxy"
	"github.com/cairnhq/cairn/infra/auth/httpauth"
	"github.com/cairnhq/cairn/infra/bootstrap"
	"github.com/cairnhq/cairn/infra/bus/busauth"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/images"
	"github.com/cairnhq/cairn/infra/vfolders"
	"github.com/cairnhq/cairn/readapi"
	"github.com/cairnhq/cairn/web"
)

// httpShutdownTimeout bounds the wait for requests in flight at shutdown;
// a wait_for_position may take up to Config.MaxWait.
const httpShutdownTimeout = 10 * time.Second

// registry returns the server's Prometheus registry, created on first use
// with the Go and process collectors. Each server has its own, so that
// several can run in one process (tests).
func (s *server) registry() (*prometheus.Registry, error) {
	if s.reg != nil {
		return s.reg, nil
	}
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	s.reg = reg
	return reg, nil
}

// listenAPI binds the API's address and loads the TLS certificate when one
// is configured (withTLS serves it); beyond loopback without TLS it warns
// that credentials cross the network in clear.
func (s *server) listenAPI() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return nil, err
	}
	if s.cfg.TLSCertFile == "" {
		if host, _, _ := net.SplitHostPort(s.cfg.Listen); !isLoopbackHost(host) {
			s.log.Warn("the HTTP API listens beyond loopback without TLS: tokens, passwords and the Web-UI's cookie cross the network in clear (give --tls-cert and --tls-key, or put a TLS terminator in front)", "listen", s.cfg.Listen)
		}
		return ln, nil
	}
	cert, err := tls.LoadX509KeyPair(s.cfg.TLSCertFile, s.cfg.TLSKeyFile)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("tls: %w", err)
	}
	s.apiTLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	return ln, nil
}

// withTLS puts TLS on the API's (connection-limited) listener when a
// certificate is configured. TLS goes outermost: the server then sees TLS
// connections (a Secure cookie), and a connection over the limits is
// closed before its handshake.
func (s *server) withTLS(ln net.Listener) net.Listener {
	if s.apiTLS == nil {
		return ln
	}
	return tls.NewListener(ln, s.apiTLS)
}

// apiScheme is the API's URL scheme: https with a certificate.
func (s *server) apiScheme() string {
	if s.cfg.TLSCertFile != "" {
		return "https"
	}
	return "http"
}

// startHTTP binds the API's address, bootstraps the superadmin and the
// default scope (the credentials file records the API's URL) and the
// images (Podman's localhost/cairn/* with their labels, then the base
// image and --image), mounts the routes and serves.
func (s *server) startHTTP(ctx context.Context) error {
	s.images = append([]string{images.BaseImage}, s.cfg.Images...)
	static := slices.Clone(s.images)
	local := s.localImages(ctx)
	ln, err := s.listenAPI()
	if err != nil {
		return err
	}
	s.apiURL = s.apiScheme() + "://" + localAddr(ln.Addr())
	s.credentials, s.created, err = bootstrap.Provision(ctx, bootstrap.Deps{
		DataDir: s.cfg.DataDir, APIURL: s.apiURL, Commands: s.handlers, Tenancy: s.models.Tenancy,
		Waiter: readapi.WaitAll(s.waiters...), Images: static, Local: local, Architecture: runtime.GOARCH, Clock: s.cfg.Clock, Logger: s.log,
	})
	if err != nil {
		ln.Close()
		return fmt.Errorf("bootstrap credentials: %w", err)
	}
	// Every /v1 request is recorded in the audit trail, by the writer
	// startManagers started (it stops after the HTTP API, started after
	// it, so in-flight requests' records are flushed).
	reg, err := s.registry()
	if err != nil {
		ln.Close()
		return err
	}
	access := s.access
	if err := s.startAppProxy(reg, access); err != nil {
		ln.Close()
		return err
	}
	if err := s.registerHealth(reg); err != nil {
		ln.Close()
		return err
	}
	auth, err := s.authenticator(reg)
	if err != nil {
		ln.Close()
		return err
	}
	s.auth = auth
	// Log streams end when the API stops: a follow would otherwise hold
	// the shutdown until its kernel ends.
	s.streams, s.stopStreams = context.WithCancel(context.Background())
	app, queries, err := s.app(reg, auth, access)
	if err != nil {
		ln.Close()
		return err
	}
	lln, err := httpapi.NewListener(ln, s.listenerConfig("api", reg))
	if err != nil {
		ln.Close()
		return err
	}
	lln = s.withTLS(lln)
	s.parts.goRun("HTTP API", func(ctx context.Context) error {
		context.AfterFunc(ctx, s.stopStreams)
		return serve(ctx, app, lln, queries.RunChanges)
	})
	s.log.Info("HTTP API serving", "url", s.apiURL, "images", s.images)
	return nil
}

// serveWithoutAudit is Endpoints.ServeWithoutAudit: the API as startHTTP
// serves it, without the access-log middleware, on ln until ctx ends.
func (s *server) serveWithoutAudit(ctx context.Context, ln net.Listener) error {
	// Its HTTP metrics go to a registry of their own (the same work per
	// request), not into the server's.
	app, queries, err := s.app(prometheus.NewRegistry(), s.auth, nil)
	if err != nil {
		ln.Close()
		return err
	}
	lln, err := httpapi.NewListener(ln, s.listenerConfig("unaudited", nil))
	if err != nil {
		ln.Close()
		return err
	}
	s.log.Warn("serving the API WITHOUT the audit trail (Endpoints.ServeWithoutAudit, for benchmarks only)", "url", "http://"+localAddr(ln.Addr()))
	return serve(ctx, app, lln, queries.RunChanges)
}

// serve runs app on ln, and changes (the change feed of its event
// streams) beside it, until ctx ends or the feed fails, then shuts it down:
// the feed first, which ends the open streams, so that the shutdown does
// not wait for them.
func serve(ctx context.Context, app *fiber.App, ln net.Listener, changes func(context.Context) error) error {
	url := "http://" + localAddr(ln.Addr())
	feedCtx, stopFeed := context.WithCancel(ctx)
	defer stopFeed()
	fed := make(chan error, 1)
	go func() { fed <- changes(feedCtx) }()
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	var feedErr error
	select {
	case err := <-served:
		stopFeed()
		return errors.Join(fmt.Errorf("serve %s: %w", url, err), <-fed)
	case feedErr = <-fed:
		if feedErr == nil {
			feedErr = errors.New("the change feed stopped on its own")
		}
		feedErr = fmt.Errorf("serve %s: %w", url, feedErr)
	case <-ctx.Done():
		stopFeed()
		feedErr = <-fed
	}
	err := errors.Join(feedErr, app.ShutdownWithTimeout(httpShutdownTimeout))
	// A shutdown that comes before the server has started serving
	// finds nothing to close: closing the listener stops a Serve
	// that starts late.
	if cerr := ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
		err = errors.Join(err, cerr)
	}
	if serr := <-served; serr != nil && !errors.Is(serr, net.ErrClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// listenerConfig is the connection limits and accept retries of the
// listener name, its metrics in reg (none if nil).
func (s *server) listenerConfig(name string, reg prometheus.Registerer) httpapi.ListenerConfig {
	return httpapi.ListenerConfig{Name: name, MaxConns: s.cfg.HTTPMaxConns, MaxConnsPerIP: s.cfg.HTTPMaxConnsPerIP, Logger: s.log, Registerer: reg}
}

// authenticator is the /v1 routes' authentication, with the cache that
// lasts until the tenancy read model changes and one replay cache for
// both listeners (a strict request accepted on one is refused on the
// other), its metrics in reg.
func (s *server) authenticator(reg prometheus.Registerer) (*httpauth.Authenticator, error) {
	cfg := httpauth.Config{Clock: s.cfg.Clock, ReplayCacheSize: s.cfg.AuthReplayCacheSize,
		StrictSigningOnly: s.cfg.AuthStrictSigningOnly, Registerer: reg}
	for _, p := range s.projectors {
		if p.Name() == s.models.Tenancy.Name() {
			// A rebuild's swap changes the rows without applying an event.
			cfg.Freshness = httpauth.Freshness{Committed: p.Position, Changed: func() uint64 {
				return max(s.models.Tenancy.LastApplied(), s.maint.Replaced(s.models.Tenancy.Name()))
			}}
		}
	}
	return httpauth.New(s.models.Tenancy, cfg)
}

// app builds a fiber app: /healthz, /metrics and the Web-UI (package web:
// the page and its assets; what it shows comes from the API) without
// authentication,
// the /v1 routes (infra/commandapi's commands, readapi's queries) behind
// signed requests and tokens (auth), every /v1 request recorded by access
// (none when nil: ServeWithoutAudit).
func (s *server) app(reg prometheus.Registerer, auth *httpauth.Authenticator, access *accesslog.Writer) (*fiber.App, *readapi.API, error) {
	app, err := httpapi.New(httpapi.Config{
		Logger: s.log, Registerer: reg, StreamRequestBody: commandapi.StreamsBody,
		ReadTimeout: s.cfg.HTTPReadTimeout, IdleTimeout: s.cfg.HTTPIdleTimeout, BodyIdleTimeout: s.cfg.UploadIdleTimeout,
	})
	if err != nil {
		return nil, nil, err
	}
	app.Get("/healthz", s.healthz)
	app.Get("/metrics", adaptor.HTTPHandler(promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: reg})))
	if access != nil {
		app.Use("/v1", accesslog.Middleware(access, s.cfg.Clock))
	}
	log, ok := s.store.(readapi.EventLog)
	if !ok {
		return nil, nil, fmt.Errorf("the event store %T cannot serve the change streams (no Head)", s.store)
	}
	vfTenancy := vfolders.Tenancy{RM: s.models.Tenancy, Hosts: vfolders.Storage{S: s.vfstorage}.HostNames()}
	local := map[string]agentlogs.LocalAgent{}
	if s.agent != nil {
		local[s.cfg.AgentID] = s.agent
	}
	queries, err := readapi.New(readapi.Deps{
		Sessions: s.models.Sessions,
		Agents:   s.models.Agents,
		Audit:    s.models.Audit,
		Waiter:   readapi.WaitAll(s.waiters...),
		Logs: agentlogs.NewSource(local, s.addresses, nil, func(req *http.Request, agentID string) error {
			return s.busKeys.SignAgentRequest(req, agentID, time.Now())
		}),
		Streams: s.streams,
		Tenancy: s.models.Tenancy,
		Usage:   s.models.Usage,
		MaxWait: s.cfg.MaxWait,
		Clock:   s.cfg.Clock,
		// Waiting sessions are explained with the scheduler's own queue
		// settings; the timeline reads the session's stream.
		Occupancy: s.models.Occupancy,
		Queue:     scheduler.Config{}.WithDefaults().Queue,
		Events:    s.store,
		VFolders: readapi.VFolderDeps{
			Folders: s.models.VFolders,
			Tenancy: vfTenancy,
			Storage: s.vfstorage,
		},
		Log:         log,
		Logger:      s.log,
		Maintenance: s.maint,
		Settings:    s.settings(),
		AuditHeads:  s.auditHeads(),
	})
	if err != nil {
		return nil, nil, err
	}
	cmds, err := commandapi.New(commandapi.Deps{
		Queries:  queries,
		Commands: s.handlers,
		VFolders: commandapi.VFolderDeps{
			Folders: s.models.VFolders,
			Tenancy: vfTenancy,
			Storage: s.vfstorage,

			MaxUploadSize: func(ctx context.Context) (int64, error) {
				return s.settings().Int(ctx, domain.SettingVFolderMaxUpload)
			},
		},
		Bus:         busauth.Signer{Keys: s.busKeys, CAFile: s.busCA},
		Maintenance: s.maint,
		Apps:        commandapi.AppDeps{Opener: s.appOpener, Routes: appproxy.SessionRoutes{Sessions: s.models.Sessions}},
	})
	if err != nil {
		return nil, nil, err
	}
	// Login and agent enrollment come before authentication; every other
	// /v1 route (commands and queries) is behind it.
	cmds.MountPublic(app)
	v1 := app.Group("/v1", auth.Middleware)
	cmds.Mount(v1)
	queries.Mount(v1)
	ui, err := web.New()
	if err != nil {
		return nil, nil, err
	}
	ui.Mount(app)
	app.Use(httpapi.NotFound)
	return app, queries, nil
}

// healthz answers that the server is up, with the read models' positions;
// status "degraded" and the parts that are (a full disk: writes answer
// 503, reads work) when any is. It answers 200 either way: the process
// serves.
func (s *server) healthz(c *fiber.Ctx) error {
	positions := make(map[string]uint64, len(s.projectors))
	for _, p := range s.projectors {
		positions[p.Name()] = p.Position()
	}
	status, degraded := "ok", s.degraded()
	if len(degraded) > 0 {
		status = "degraded"
	}
	return c.JSON(fiber.Map{
		"status":              status,
		"degraded":            degraded,
		"data_dir_free_bytes": s.dataDirFree(),
		"version":             s.cfg.Version,
		"local_agent":         s.localAgentID(),
		"bus":                 s.nats.ClientURL(),
		"read_models":         positions,
	})
}

func (s *server) localAgentID() string {
	if s.agent == nil {
		return ""
	}
	return s.cfg.AgentID
}

// localAddr is addr as a URL host for this machine: the loopback address
// when it listens on every interface.
func localAddr(addr net.Addr) string {
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

var (
	_ commandapi.BusSigner    = busauth.Signer{}
	_ readapi.VFolderTenancy  = vfolders.Tenancy{}
	_ commands.VFolderTenancy = vfolders.Tenancy{}
	_ readapi.EventLog        = (*sqlite.Store)(nil)
	_ readapi.EventLog        = (*postgres.Store)(nil)
)

// settings are the run-time settings as the API and the server's parts
// read them: the read model, with the flags' values as defaults.
func (s *server) settings() readapi.SettingsDeps {
	return readapi.SettingsDeps{Changes: s.models.Settings, Defaults: s.cfg.settingDefaults()}
}

// auditHeads is the audit head signer for the query side (nil without one:
// an interface holding a nil *Signer would not be nil).
func (s *server) auditHeads() readapi.AuditHeads {
	if s.heads == nil {
		return nil
	}
	return s.heads
}
