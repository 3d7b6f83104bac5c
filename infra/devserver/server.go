package devserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/agents/node"
	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/auditseq"
	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/commands/sessionlimits"
	"github.com/cairnhq/cairn/commands/vfolderjobs"
	"github.com/cairnhq/cairn/commands/vfolderorphans"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/dsn"
	"github.com/cairnhq/cairn/eventstore/postgres"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/agentlogs"
	"github.com/cairnhq/cairn/infra/appproxy"
	"github.com/cairnhq/cairn/infra/auditheads"
	"github.com/cairnhq/cairn/infra/auth/httpauth"
	"github.com/cairnhq/cairn/infra/auth/password"
	"github.com/cairnhq/cairn/infra/bootstrap"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/busauth"
	"github.com/cairnhq/cairn/infra/bus/busrevoke"
	"github.com/cairnhq/cairn/infra/bus/natsembed"
	"github.com/cairnhq/cairn/infra/dispatch/forwarder"
	"github.com/cairnhq/cairn/infra/dispatch/reports"
	"github.com/cairnhq/cairn/infra/lease"
	"github.com/cairnhq/cairn/infra/maintenance"
	"github.com/cairnhq/cairn/infra/readmodels"
	"github.com/cairnhq/cairn/infra/vfolders"
	"github.com/cairnhq/cairn/infra/vfstorage/localfs"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/occupancy"
	"github.com/cairnhq/cairn/readapi"
)

// Files and directories inside Config.DataDir.
const (
	natsDir        = "nats"
	busKeysDir     = "bus-keys"
	agentDir       = "agent"
	checkpointFile = "forwarder.checkpoint"
	addressesFile  = "agent-addresses.json"
	vfolderDir     = "vfolders"
)

// Run starts the development server (see the package documentation), runs
// it until ctx ends, then stops it and returns nil; or returns why it
// could not start, or why a part stopped on its own.
func Run(ctx context.Context, cfg Config) (err error) {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.WithDefaults()
	log := cfg.Logger
	log.Info("cairn dev starting", "version", cfg.Version, "config", cfg)
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return fmt.Errorf("devserver: data directory: %w", err)
	}

	s := &server{cfg: cfg, log: log, parts: newParts(log, cfg.ShutdownTimeout)}
	defer func() {
		log.Info("cairn dev stopping")
		if stopErr := s.parts.stopAll(); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("devserver: stop: %w", stopErr))
		}
		log.Info("cairn dev stopped")
	}()
	if err := s.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // interrupted while starting
		}
		return fmt.Errorf("devserver: %w", err)
	}
	b := s.banner()
	printBanner(cfg.Out, b)
	if cfg.OnReady != nil {
		cfg.OnReady(Endpoints{APIURL: s.apiURL, Token: s.credentials.Token, CredentialsPath: b.credentialsPath,
			BusURL: s.nats.ClientURL(), AgentID: s.localAgentID(), AppProxyURL: s.appProxyURL, ServeWithoutAudit: s.serveWithoutAudit})
	}

	select {
	case <-ctx.Done():
		return nil
	case e := <-s.parts.exited:
		return fmt.Errorf("devserver: %s stopped: %w", e.name, e.err)
	}
}

// server is the state of one Run.
type server struct {
	cfg   Config
	log   *slog.Logger
	parts *parts

	store      eventstore.Store
	db         *projections.DB
	handlers   *commands.Handlers
	nats       *natsembed.Server
	busKeys    *busauth.Keys
	busCA      string // the bus's CA certificate when it uses TLS
	bus        *bus.Bus
	models     readmodels.Set
	waiters    []readapi.Waiter
	projectors []*projections.Projector
	reg        *prometheus.Registry
	addresses  *agentlogs.AddressBook
	agent      *node.Agent
	access     *accesslog.Writer
	auth       *httpauth.Authenticator
	images     []string
	vfstorage  *localfs.Storage
	maint      *maintenance.Service
	heads      *auditheads.Signer // nil without an audit head key
	leases     *maintenance.Leases
	// leaseHolder names this process in the PostgreSQL leases table;
	// leaseMetrics records its leases.
	leaseHolder  string
	leaseMetrics *lease.Metrics

	apiURL      string
	apiTLS      *tls.Config // the API's TLS, nil without a certificate
	appProxyURL string
	appOpener   *appproxy.Opener
	credentials bootstrap.Credentials
	created     bool

	// streams bounds the API's log streams: stopStreams ends them when
	// the API stops.
	streams     context.Context
	stopStreams context.CancelFunc
}

// start starts every part in order; what started is stopped by Run.
func (s *server) start(ctx context.Context) error {
	for _, step := range []struct {
		name string
		fn   func(context.Context) error
	}{
		{"event store", s.startStore},
		{"embedded NATS", s.startNATS},
		{"bus", s.startBus},
		{"read models", s.startProjectors},
		{"process managers", s.startManagers},
		{"local agent", s.startAgent},
		{"HTTP API", s.startHTTP},
	} {
		start := time.Now()
		if err := step.fn(ctx); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
		s.log.Debug("started", "part", step.name, "took", time.Since(start))
	}
	return nil
}

func (s *server) startStore(ctx context.Context) error {
	store, db, err := readmodels.Open(ctx, s.cfg.Store)
	if err != nil {
		return err
	}
	s.store, s.db = store, db
	s.parts.onClose("event store", store.Close)
	s.parts.onClose("read-model database", db.Close)
	// The read models exist before their projectors run: commands consult
	// some of them (quota standings at enqueue, vfolder tenancy).
	s.models = readmodels.New(db, store)
	vfs, err := localfs.Open(s.cfg.vfolderConfig(), s.log)
	if err != nil {
		return err
	}
	s.vfstorage = vfs
	s.parts.onClose("vfolder storage", vfs.Close)
	s.handlers, err = commands.NewHandlers(store, s.cfg.Clock, commands.Options{
		PasswordHasher: password.Hasher{Params: password.DefaultParams()},
		Quotas:         occupancy.Standings{Tenancy: s.models.Tenancy, Occupancy: s.models.Occupancy},
		VFolders:       s.vfolderPorts(),

		DefaultVFolderQuota: limit(s.cfg.VFolderDefaultQuota),
		Settings:            s.cfg.settingDefaults(),
	})
	return err
}

// vfolderPorts are the parts the vfolder commands use.
func (s *server) vfolderPorts() commands.VFolderPorts {
	st := vfolders.Storage{S: s.vfstorage}
	return commands.VFolderPorts{
		Tenancy:   vfolders.Tenancy{RM: s.models.Tenancy, Hosts: st.HostNames()},
		Storage:   st,
		Directory: s.models.VFolders,
	}
}

func (s *server) startNATS(ctx context.Context) error {
	host, port, err := splitHostPort(s.cfg.NATSListen)
	if err != nil {
		return err
	}
	keys, err := busauth.LoadOrCreateKeys(filepath.Join(s.cfg.DataDir, busKeysDir))
	if err != nil {
		return err
	}
	trust, err := keys.Trust(nil)
	if err != nil {
		return err
	}
	opts := natsembed.Options{
		Host:            host,
		Port:            port,
		StoreDir:        filepath.Join(s.cfg.DataDir, natsDir),
		Auth:            &trust,
		RecoverInterval: s.cfg.NATSRecoverInterval,
		Logger:          s.log,
	}
	if !isLoopbackHost(host) {
		// Beyond loopback, with TLS: a CA kept in the keys directory (its
		// certificate goes to every agent) signs a server certificate made
		// at every start for this machine's names and addresses.
		t, err := busauth.LoadOrCreateServerTLS(filepath.Join(s.cfg.DataDir, busKeysDir), []string{host})
		if err != nil {
			return err
		}
		opts.TLS, s.busCA = t.Config, t.CAFile
	}
	ns, err := natsembed.Start(ctx, opts)
	if err != nil {
		return err
	}
	s.busKeys = keys
	s.nats = ns
	s.parts.onClose("embedded NATS", func() error { ns.Shutdown(); return nil })
	return s.followRevocations(ctx)
}

// followRevocations applies the agents' revoked bus keys (enrollments
// revoked or replaced) to the embedded NATS, and waits until those
// already in the log are, so no revoked key connects after a restart.
func (s *server) followRevocations(ctx context.Context) error {
	reg, err := s.registry()
	if err != nil {
		return err
	}
	f, err := busrevoke.New(busrevoke.Config{Logger: s.log, Registerer: reg}, s.store, s.busKeys, s.nats)
	if err != nil {
		return err
	}
	s.parts.goRun("bus revocations", f.Run)
	timeout := time.NewTimer(s.cfg.ReadyTimeout)
	defer timeout.Stop()
	select {
	case <-f.CaughtUp():
		return nil
	case e := <-s.parts.exited:
		return fmt.Errorf("%s: %w", e.name, e.err)
	case <-ctx.Done():
		return ctx.Err()
	case <-timeout.C:
		return fmt.Errorf("bus revocations have not caught up with the log after %s", s.cfg.ReadyTimeout)
	}
}

func (s *server) startBus(ctx context.Context) error {
	creds, err := busauth.EnsureCredentials(filepath.Join(s.cfg.DataDir, busKeysDir, "manager.creds"), func() ([]byte, error) {
		return s.busKeys.ManagerCredentials("cairn-dev")
	})
	if err != nil {
		return err
	}
	b, err := bus.Connect(ctx, bus.Config{URL: s.nats.ClientURL(), ClientName: "cairn-dev", CredentialsFile: creds, CAFile: s.busCA}, s.log)
	if err != nil {
		return err
	}
	s.bus = b
	s.parts.onClose("bus", b.Close)
	return nil
}

// startProjectors runs the read models' projectors and waits until they
// have caught up with the log.
func (s *server) startProjectors(ctx context.Context) error {
	reg, err := s.registry()
	if err != nil {
		return err
	}
	metrics, err := projections.NewMetrics(reg)
	if err != nil {
		return err
	}
	db := s.db
	if err := reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "cairn_readmodel_queries_total",
		Help: "Read statements run on the read models' database outside the projectors' batches (the query side's queries).",
	}, func() float64 { return float64(db.Reads()) })); err != nil {
		return err
	}
	if err := s.startMaintenance(); err != nil {
		return err
	}
	var projectors []*projections.Projector
	for _, rm := range s.models.All() {
		p, err := projections.NewProjector(s.db, s.store, rm, projections.Options{Logger: s.log, Metrics: metrics})
		if err != nil {
			return err
		}
		s.parts.goRun("projector "+p.Name(), s.maint.Supervise(p))
		projectors = append(projectors, p)
		s.waiters = append(s.waiters, p)
		if rm.Name() == s.models.Tenancy.Name() {
			// Every request reads a dozen tenancy answers that change
			// rarely: kept until the tenancy read model changes (the
			// authenticator's cache keeps its own the same way).
			name := rm.Name()
			s.models.Tenancy.CacheAnswers(p.Position, func() uint64 { return s.maint.Replaced(name) }, 0)
		}
	}
	s.projectors = projectors
	timeout := time.NewTimer(s.cfg.ReadyTimeout)
	defer timeout.Stop()
	for _, p := range projectors {
		select {
		case <-p.CaughtUp():
		case e := <-s.parts.exited:
			return fmt.Errorf("%s: %w", e.name, e.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout.C:
			return fmt.Errorf("projector %s has not caught up with the log after %s (at position %d)", p.Name(), s.cfg.ReadyTimeout, p.Position())
		}
	}
	return nil
}

// startManagers runs the scheduler, the audit sequencer and the session
// limits (each under its lease), the forwarder, the reports consumer and
// the address book of agents' logs endpoints.
func (s *server) startManagers(context.Context) error {
	sched, err := scheduler.New(scheduler.Config{Clock: s.cfg.Clock, Logger: s.log}, s.store, scheduler.CommandsOf(s.handlers))
	if err != nil {
		return err
	}
	fwd, err := forwarder.New(forwarder.Config{Logger: s.log, MountSources: vfolders.Storage{S: s.vfstorage}}, s.store, s.bus,
		forwarder.NewFileCheckpoint(filepath.Join(s.cfg.DataDir, checkpointFile)))
	if err != nil {
		return err
	}
	reg, err := s.registry()
	if err != nil {
		return err
	}
	// The access log's writer: the API's requests and the agents'
	// kernel.activity reports are recorded through it. Started before
	// both, it stops after them and flushes what they wrote.
	access, err := accesslog.NewWriter(accesslog.Config{Logger: s.log, Registerer: reg,
		Queue: s.cfg.AuditQueue, FullWait: s.cfg.AuditFullWait}, s.store)
	if err != nil {
		return err
	}
	s.access = access
	s.parts.goRun("access log", access.Run)
	repCfg := s.cfg.reportsConfig()
	repCfg.Clock, repCfg.Logger, repCfg.Registerer = s.cfg.Clock, s.log, reg
	repCfg.Record = access.Write
	rep, err := reports.New(repCfg, s.bus, s.store, s.handlers)
	if err != nil {
		return err
	}
	book, err := agentlogs.OpenAddressBook(filepath.Join(s.cfg.DataDir, addressesFile), s.log)
	if err != nil {
		return err
	}
	s.addresses = book
	seqCfg := auditseq.Config{Logger: s.log, Registerer: reg}
	if err := s.startAuditHeads(reg); err != nil {
		return err
	}
	if s.heads != nil {
		seqCfg.OnSealed = s.heads.Observe
	}
	seq, err := auditseq.New(seqCfg, s.store)
	if err != nil {
		return err
	}
	limits, err := sessionlimits.New(sessionlimits.Config{Clock: s.cfg.Clock, Logger: s.log, Settings: s.cfg.settingDefaults()}, s.store, s.handlers.TerminateSession)
	if err != nil {
		return err
	}
	jobs, err := vfolderjobs.New(vfolderjobs.Config{Logger: s.log}, s.store, s.models.VFolders,
		vfolders.Storage{S: s.vfstorage}, vfolderjobs.FromHandlers(s.handlers))
	if err != nil {
		return err
	}
	orphans, err := vfolderorphans.New(vfolderorphans.Config{Grace: s.cfg.VFolderOrphanGrace,
		Clock: s.cfg.Clock, Logger: s.log, Registerer: reg}, s.store, vfolders.Storage{S: s.vfstorage})
	if err != nil {
		return err
	}
	for _, leader := range []struct {
		name string
		run  func(context.Context) error
	}{{"scheduler", sched.Run}, {"audit sequencer", seq.Run}, {"session limits", limits.Run}, {"vfolder jobs", jobs.Run}, {"vfolder orphans", orphans.Run}} {
		name, run := leader.name, leader.run
		l, err := s.lease(leaseName(name))
		if err != nil {
			return err
		}
		s.parts.goRun(name, func(ctx context.Context) error {
			return lease.Run(ctx, l, name, s.log, time.Second, s.leases.Track(name, run))
		})
	}
	s.parts.goRun("forwarder", fwd.Run)
	s.parts.goRun("reports consumer", rep.Run)
	s.parts.goRun("agent address book", func(ctx context.Context) error { return book.Run(ctx, s.bus, "") })
	s.parts.goRun("vfolder upload expiry", s.vfstorage.RunUploadExpiry)
	return nil
}

// startAuditHeads makes the audit head signer when a key is configured
// and runs it; it signs what the audit sequencer seals, so only the
// replica holding the sequencer's lease signs.
func (s *server) startAuditHeads(reg prometheus.Registerer) error {
	if s.cfg.AuditHeadKey == "" {
		s.log.Warn("no audit head key configured: the audit chain's head is not signed, so a truncated or re-hashed trail is detectable only against heads kept by other means (cairn audit keygen, then --audit-head-key and --audit-head-sink)")
		return nil
	}
	key, err := auditheads.LoadKey(s.cfg.AuditHeadKey)
	if err != nil {
		return err
	}
	var sinks []auditheads.Sink
	for _, spec := range s.cfg.AuditHeadSinks {
		sink, err := auditheads.ParseSink(spec)
		if err != nil {
			return err
		}
		sinks = append(sinks, sink)
	}
	heads, err := auditheads.New(auditheads.Config{Key: key, Sinks: sinks, Every: uint64(s.cfg.AuditHeadEvery),
		Interval: s.cfg.AuditHeadInterval, Logger: s.log, Registerer: reg})
	if err != nil {
		return err
	}
	s.heads = heads
	s.parts.goRun("audit head signer", heads.Run)
	return nil
}

// leaseName is the lease of the singleton name (a file name, a row of the
// leases table).
func leaseName(name string) string { return strings.ReplaceAll(name, " ", "-") }

// lease is the lease that keeps one leader of name (the scheduler, the
// audit sequencer) per store: a flock beside a SQLite database, a row of
// the store's leases table in PostgreSQL, whose epoch fences the leader's
// appends (the held context carries it; see infra/lease).
func (s *server) lease(name string) (lease.Lease, error) {
	switch st := s.store.(type) {
	case *sqlite.Store:
		return lease.NewFile(st.Path()+"."+name+".lock", time.Second), nil
	case *postgres.Store:
		// Without Cairn's own parameters (schema), which pgx would send
		// to the server as settings, and the server refuse.
		url, _, err := dsn.ParsePostgres(s.cfg.Store)
		if err != nil {
			return nil, err
		}
		if s.leaseHolder == "" {
			s.leaseHolder = lease.NewHolder()
		}
		if s.leaseMetrics == nil {
			reg, err := s.registry()
			if err != nil {
				return nil, err
			}
			if s.leaseMetrics, err = lease.NewMetrics(reg); err != nil {
				return nil, err
			}
		}
		return lease.NewPostgres(url, name, lease.PostgresOptions{Schema: st.Schema(), TTL: s.cfg.LeaseTTL,
			Holder: s.leaseHolder, Metrics: s.leaseMetrics, Logger: s.log})
	}
	return nil, fmt.Errorf("no scheduler lease for an event store of type %T", s.store)
}

// startAgent runs the local agent, unless the configuration says none.
func (s *server) startAgent(context.Context) error {
	if s.cfg.NoAgent {
		s.log.Info("no local agent: sessions wait for an agent to join", "bus", s.nats.ClientURL())
		return nil
	}
	creds, err := busauth.EnsureCredentials(filepath.Join(s.cfg.DataDir, busKeysDir, "agent-"+s.cfg.AgentID+".creds"), func() ([]byte, error) {
		creds, _, err := s.busKeys.AgentCredentials(s.cfg.AgentID)
		return creds, err
	})
	if err != nil {
		return err
	}
	a, err := node.New(node.Config{
		AgentID:            s.cfg.AgentID,
		BusURL:             s.nats.ClientURL(),
		BusCredentialsFile: creds,
		BusCAFile:          s.busCA,
		PodmanURI:          s.cfg.Podman,
		GPUs:               s.cfg.GPUs,
		UserNS:             s.cfg.KernelUserNS,
		DataDir:            filepath.Join(s.cfg.DataDir, agentDir),
		Version:            s.cfg.Version,
		// Its endpoint serves logs, apps and terminals to the manager and
		// the app proxy, as a remote agent's does.
		Listen: s.cfg.AgentListen,
	}, s.log)
	if err != nil {
		return err
	}
	s.agent = a
	s.parts.goRun("local agent", func(ctx context.Context) error {
		err := a.Run(ctx)
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("%w (is Podman serving %s? scripts/install-podman.sh starts it; --no-agent runs without a local agent)", err, s.cfg.Podman)
		}
		return err
	})
	return nil
}

// splitHostPort parses host:port with a numeric port.
// isLoopbackHost: localhost or a loopback address.
func isLoopbackHost(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("port %q: %w", p, err)
	}
	return host, port, nil
}
