package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cairnhq/cairn/agents/accelerator/nvml"
	"github.com/cairnhq/cairn/agents/node"
	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime/podman"
	"github.com/cairnhq/cairn/commands/vfolderorphans"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/appproxy"
	"github.com/cairnhq/cairn/infra/auditheads"
	"github.com/cairnhq/cairn/infra/bus/natsembed"
	"github.com/cairnhq/cairn/infra/config"
	"github.com/cairnhq/cairn/infra/dispatch/reports"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/images"
	"github.com/cairnhq/cairn/infra/lease"
	"github.com/cairnhq/cairn/infra/vfstorage/localfs"
	"github.com/cairnhq/cairn/readapi"
)

// AppProxyOff as Config.AppProxyListen serves no app proxy in the process.
const AppProxyOff = "off"

// Defaults applied by Config.WithDefaults to zero fields.
const (
	DefaultListen          = "127.0.0.1:8080"
	DefaultDataDir         = "./data"
	DefaultNATSListen      = "127.0.0.1:4222"
	DefaultAppProxyListen  = "127.0.0.1:8081"
	DefaultAgentListen     = "127.0.0.1:0"
	DefaultAgentID         = "local"
	DefaultGPUs            = nvml.SourceNone
	DefaultPodman          = podman.DefaultURI
	DefaultMaxWait         = readapi.DefaultMaxWait
	DefaultShutdownTimeout = 30 * time.Second
	DefaultReadyTimeout    = 2 * time.Minute
	// DefaultAuditQueue is how many access records may wait in memory to
	// be stored (accesslog.DefaultQueue).
	DefaultAuditQueue = accesslog.DefaultQueue
	// DefaultAuditFullWait is how long a request waits for room in a full
	// queue of access records before it is answered 503.
	DefaultAuditFullWait = accesslog.DefaultFullWait
	// DefaultNATSRecoverInterval is how often the embedded NATS checks
	// whether a full disk has room again (natsembed).
	DefaultNATSRecoverInterval = natsembed.DefaultRecoverInterval
	// DefaultVFolderHost names the default storage host of virtual folders.
	DefaultVFolderHost = "local"
	// DefaultVFolderQuota is the quota of a folder created without one:
	// one ordinary user must not be able to fill a storage host.
	DefaultVFolderQuota = 10 << 30
	// DefaultVFolderMaxUpload bounds one uploaded file (a PUT or a
	// resumable upload).
	DefaultVFolderMaxUpload = 64 << 30
	// DefaultVFolderOrphanGrace is how old a folder directory no folder
	// owns must be before the collector sets it aside.
	DefaultVFolderOrphanGrace = vfolderorphans.DefaultGrace
	// DefaultLeaseTTL is how long a singleton's lease lasts without
	// renewal on a PostgreSQL store (lease.DefaultTTL): about the longest
	// failover after its leader died or hung.
	DefaultLeaseTTL = lease.DefaultTTL
	// DefaultVFolderUploadTTL is how long a resumable upload lives
	// without a byte.
	DefaultVFolderUploadTTL = localfs.DefaultUploadTTL
	// NoLimit, as a size limit of Config, disables it.
	NoLimit = -1
)

// Config configures the development server. The zero value is valid:
// every zero field takes its default.
type Config struct {
	// Listen is the HTTP API's address, host:port (default 127.0.0.1:8080;
	// port 0 picks a free port, printed at start).
	Listen string
	// TLSCertFile and TLSKeyFile (PEM), when given, make the API's
	// listener serve HTTPS (TLS 1.2 or later): the Web-UI's login cookie is
	// then Secure. Beyond loopback, bearer tokens and passwords otherwise
	// cross the network in clear (the server warns).
	TLSCertFile, TLSKeyFile string
	// DataDir holds everything the server keeps: the SQLite store, the
	// embedded NATS server's streams, the forwarder's checkpoint, the local
	// agent's records and credentials.json (default ./data).
	DataDir string
	// Store is the event store's DSN (default sqlite://<DataDir>/cairn.db).
	Store string
	// NATSListen is the embedded NATS server's address, host:port (default
	// 127.0.0.1:4222, this machine only; 0.0.0.0:4222 lets other machines'
	// agents join; port 0 picks a free port).
	NATSListen string
	// AppProxyListen is the app proxy's address, host:port (default
	// 127.0.0.1:8081; 127.0.0.1:0 when Listen's port is 0). Sessions' apps
	// and terminals are reached there, never through the API's listener.
	// AppProxyOff ("off") serves no proxy here: a `cairn proxy` with the
	// same AppProxyKey does, at AppProxyURL (required then).
	AppProxyListen string
	// AppProxyURL is the app proxy's base URL as browsers reach it, for
	// the links the API hands out (default http://<AppProxyListen's bound
	// address>). Give it when a TLS terminator or another host name is in
	// front.
	AppProxyURL string
	// AppProxyKey is the file of the key app tickets and cookies are sealed
	// with (default <DataDir>/app-proxy.key, made if missing): a separate
	// `cairn proxy` needs the same file.
	AppProxyKey string
	// AppProxyDomain turns on the subdomain mode of the app links: an app
	// opens at the root of <app>--<session>.<AppProxyDomain> (with
	// AppProxyURL's scheme and port), a DNS wildcard pointing at the proxy.
	AppProxyDomain string
	// AgentListen is the local agent's HTTP endpoint (its logs, apps and
	// terminals, answering only requests the manager signed; default
	// 127.0.0.1:0).
	AgentListen string
	// NoAgent runs no local agent: sessions wait for an agent that joins
	// over the bus.
	NoAgent bool
	// AgentID is the local agent's id (default "local").
	AgentID string
	// GPUs is the local agent's GPU discovery (default none; nvml,
	// mock:dgxh100...).
	GPUs string
	// Podman is the Podman service of the local agent (default
	// unix:///run/podman/podman.sock).
	Podman string
	// KernelUserNS is the local agent's user namespace mode for kernels
	// (node.Config.UserNS: private, the default, or host).
	KernelUserNS string
	// Images are the images sessions may use besides images.BaseImage.
	Images []string
	// VFolderHosts are the storage hosts of virtual folders, name:path
	// (default local:<DataDir>/vfolders, made if missing). Agents on other
	// machines bind-mount folders from the same paths: they must see the
	// hosts there too (e.g. the same NFS mount).
	VFolderHosts localfs.Hosts
	// VFolderDefaultQuota is the quota in bytes of a folder created or
	// cloned without one (default DefaultVFolderQuota, 10 GiB; NoLimit:
	// none). It is recorded in the folder's vfolder.created.
	VFolderDefaultQuota int64
	// VFolderMaxUpload bounds one uploaded file in bytes, whatever the
	// quotas allow (default DefaultVFolderMaxUpload, 64 GiB; NoLimit:
	// only the quotas). Over it the upload is refused with 413.
	VFolderMaxUpload int64
	// VFolderOrphanGrace is how long a folder directory that no folder
	// owns (left by a create that crashed) is left alone before the
	// collector moves it to its host's .cairn-lost+found (default 1h).
	// The collector runs at start and then every 12 hours.
	VFolderOrphanGrace time.Duration
	// LeaseTTL is how long a singleton process manager's lease lasts past
	// its last renewal on a PostgreSQL store (default DefaultLeaseTTL, 5s):
	// a follower takes over within about that after the leader stopped
	// renewing; the leader renews every LeaseTTL/3 and steps down by
	// itself when it could not. SQLite stores use a file lock instead.
	LeaseTTL time.Duration
	// VFolderUploadTTL is how long a resumable (tus) upload lives without
	// a byte before it expires and its reservation of the folder's quota
	// is released (default localfs.DefaultUploadTTL, 24h).
	VFolderUploadTTL time.Duration
	// MaxWait bounds how long a query waits for the read models to reach a
	// position it was asked to read at (default 30s).
	MaxWait time.Duration
	// ShutdownTimeout bounds the wait for each part to stop (default 30s).
	ShutdownTimeout time.Duration
	// ReadyTimeout bounds the wait for the read models to catch up with
	// the log at start (default 2 minutes).
	ReadyTimeout time.Duration
	// HTTPMaxConns is the most HTTP connections served at once; more are
	// answered 503 and closed (default: the open-files limit less what the
	// database and the bus need, httpapi.DefaultMaxConns).
	HTTPMaxConns int
	// HTTPMaxConnsPerIP is the most HTTP connections from one client
	// address (an IPv6 client's /64); more are answered 429 and closed
	// (default an eighth of HTTPMaxConns).
	HTTPMaxConnsPerIP int
	// HTTPReadTimeout bounds the reading of a request's header and of any
	// body but an upload's, from its first byte (default 30s).
	HTTPReadTimeout time.Duration
	// HTTPIdleTimeout bounds the wait for the next request on a keep-alive
	// connection (default 2m).
	HTTPIdleTimeout time.Duration
	// UploadIdleTimeout cuts a file upload (408) once no byte of it came
	// for that long; an upload making progress may take any time (default
	// 60s).
	UploadIdleTimeout time.Duration
	// AuditQueue bounds the access records answered and not yet stored,
	// kept in memory while the store takes no writes (a full disk); once
	// it is full, requests are answered 503 rather than answered without
	// a record (default 16384).
	AuditQueue int
	// AuditFullWait is how long a request waits for room in a full queue
	// of access records before it is answered 503 (default 1s).
	AuditFullWait time.Duration
	// AuditHeadKey is the file of the ed25519 key that signs the audit
	// chain's head (infra/auditheads; mode 0600, kept outside the event
	// store). Empty: no head is signed.
	AuditHeadKey string
	// AuditHeadSinks are where signed heads are published
	// (auditheads.ParseSink specs: file:/path, syslog:, syslog://host:port,
	// syslog+tcp://host:port, http(s)://...); required with AuditHeadKey.
	AuditHeadSinks []string
	// AuditHeadEvery signs the head once the chain has grown by this many
	// records (default auditheads.DefaultEvery, 1000).
	AuditHeadEvery int
	// AuditHeadInterval signs the head at least this often while the chain
	// grows (default auditheads.DefaultInterval, 60s).
	AuditHeadInterval time.Duration
	// NATSRecoverInterval is how often the embedded NATS checks whether
	// the disk of its store has room again after it was full, to restart
	// JetStream (default 5s).
	NATSRecoverInterval time.Duration
	// HeartbeatTimeout declares an agent disconnected when nothing was
	// heard from it for this long (default reports.DefaultHeartbeatTimeout,
	// 30s): its sessions are DISCONNECTED and keep their allocations.
	HeartbeatTimeout time.Duration
	// AgentLostTimeout gives a silent agent up when nothing was heard from
	// it for this long (default reports.DefaultAgentLostTimeout, 15m): its
	// sessions go to ERROR (agent-lost) and their allocations are released.
	AgentLostTimeout time.Duration
	// Version is reported by /healthz and the local agent.
	Version string
	// Logger receives every part's logs (default slog.Default()).
	Logger *slog.Logger
	// Out receives the start-up banner: URLs, the token, how an agent
	// joins (default: discarded).
	Out io.Writer
	// Clock stamps events and measures timeouts (default time.Now).
	Clock func() time.Time
	// AuthReplayCacheSize bounds how many strict-mode request signatures
	// the API remembers to refuse their replays (default
	// signing.DefaultReplayCacheSize); when full, the window in which a
	// strict request is accepted shrinks below the 15-minute skew.
	AuthReplayCacheSize int
	// AuthStrictSigningOnly refuses Backend.AI-compatible signed requests
	// (replayable within 15 minutes): for deployments without Backend.AI
	// clients.
	AuthStrictSigningOnly bool
	// OnReady, if set, is called once the server serves, with where it
	// does (for callers that run it in process: benchmarks, tests).
	OnReady func(Endpoints)
}

// Endpoints say where a running server serves.
type Endpoints struct {
	// APIURL is the HTTP API's base URL, http://host:port.
	APIURL string
	// Token is the bootstrap superadmin's bearer token.
	Token string
	// CredentialsPath is the credentials file.
	CredentialsPath string
	// BusURL is the embedded NATS server's URL.
	BusURL string
	// AgentID is the local agent's id, empty without one.
	AgentID string
	// AppProxyURL is the app proxy's base URL.
	AppProxyURL string
	// ServeWithoutAudit serves the same API on ln, without the access-log
	// middleware (no request made there is recorded in the audit trail),
	// until ctx ends. It exists for the API benchmark (cairn-bench api),
	// which measures what the audit trail costs by alternating between the
	// two in one process; `cairn dev` never calls it and no flag or
	// environment variable reaches it. The caller ends ctx and waits for
	// the call to return before the server stops. It is left out of the
	// JSON form of Endpoints (a test's child process prints it).
	ServeWithoutAudit func(ctx context.Context, ln net.Listener) error `json:"-"`
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	set := func(f *string, v string) {
		if *f == "" {
			*f = v
		}
	}
	set(&c.Listen, DefaultListen)
	set(&c.DataDir, DefaultDataDir)
	set(&c.NATSListen, DefaultNATSListen)
	if c.AppProxyListen == "" {
		c.AppProxyListen = DefaultAppProxyListen
		if host, port, err := net.SplitHostPort(c.Listen); err == nil && port == "0" {
			c.AppProxyListen = net.JoinHostPort(host, "0")
		}
	}
	set(&c.AgentListen, DefaultAgentListen)
	set(&c.AgentID, DefaultAgentID)
	set(&c.GPUs, DefaultGPUs)
	set(&c.Podman, DefaultPodman)
	set(&c.Version, "dev")
	set(&c.Store, "sqlite://"+filepath.Join(c.DataDir, "cairn.db"))
	if c.MaxWait == 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = DefaultReadyTimeout
	}
	if c.HTTPMaxConns == 0 {
		c.HTTPMaxConns = httpapi.DefaultMaxConns()
	}
	if c.HTTPMaxConnsPerIP == 0 {
		c.HTTPMaxConnsPerIP = httpapi.DefaultMaxConnsPerIP(c.HTTPMaxConns)
	}
	if c.HTTPReadTimeout == 0 {
		c.HTTPReadTimeout = httpapi.DefaultReadTimeout
	}
	if c.HTTPIdleTimeout == 0 {
		c.HTTPIdleTimeout = httpapi.DefaultIdleTimeout
	}
	if c.UploadIdleTimeout == 0 {
		c.UploadIdleTimeout = httpapi.DefaultBodyIdleTimeout
	}
	if c.AuditQueue == 0 {
		c.AuditQueue = DefaultAuditQueue
	}
	if c.AuditFullWait == 0 {
		c.AuditFullWait = DefaultAuditFullWait
	}
	if c.NATSRecoverInterval == 0 {
		c.NATSRecoverInterval = DefaultNATSRecoverInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.VFolderDefaultQuota == 0 {
		c.VFolderDefaultQuota = DefaultVFolderQuota
	}
	if c.VFolderMaxUpload == 0 {
		c.VFolderMaxUpload = DefaultVFolderMaxUpload
	}
	if c.VFolderOrphanGrace == 0 {
		c.VFolderOrphanGrace = DefaultVFolderOrphanGrace
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.VFolderUploadTTL == 0 {
		c.VFolderUploadTTL = DefaultVFolderUploadTTL
	}
	if len(c.VFolderHosts) == 0 {
		dir, err := filepath.Abs(filepath.Join(c.DataDir, vfolderDir))
		if err != nil {
			dir = filepath.Join(c.DataDir, vfolderDir)
		}
		c.VFolderHosts = localfs.Hosts{{Name: DefaultVFolderHost, Path: dir}}
	}
	return c
}

// vfolderConfig is the storage configuration of the virtual folders.
func (c Config) vfolderConfig() localfs.Config {
	return localfs.Config{Hosts: c.VFolderHosts, UploadTTL: c.VFolderUploadTTL, CreateHostDirs: true}
}

// Validate reports every problem at once. Zero fields are valid (they take
// their defaults).
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	d := c.WithDefaults()
	if err := checkHostPort(d.Listen); err != nil {
		add("listen %q: %w", d.Listen, err)
	}
	if err := checkHostPort(d.NATSListen); err != nil {
		add("nats listen %q: %w", d.NATSListen, err)
	}
	if d.Listen == d.NATSListen && !hasPortZero(d.Listen) {
		add("listen and nats listen are both %q", d.Listen)
	}
	if (d.TLSCertFile == "") != (d.TLSKeyFile == "") {
		add("tls: give both the certificate and the key (tls cert, tls key)")
	}
	if d.AppProxyListen == AppProxyOff {
		if d.AppProxyURL == "" {
			add("app proxy listen is off: give the URL of the app proxy that serves this Cairn (app proxy url)")
		}
	} else if err := checkHostPort(d.AppProxyListen); err != nil {
		add("app proxy listen %q: %w", d.AppProxyListen, err)
	}
	if d.AppProxyDomain != "" {
		if err := appproxy.CheckDomain(d.AppProxyDomain); err != nil {
			add("app proxy domain: %w", err)
		}
	}
	if !hasPortZero(d.AppProxyListen) && (d.AppProxyListen == d.Listen || d.AppProxyListen == d.NATSListen) {
		add("app proxy listen %q is taken by the API or NATS", d.AppProxyListen)
	}
	if d.AppProxyURL != "" {
		if u, err := url.Parse(d.AppProxyURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			add("app proxy url %q: want http(s)://host[:port], no path", d.AppProxyURL)
		}
	}
	if err := checkHostPort(d.AgentListen); err != nil {
		add("agent listen %q: %w", d.AgentListen, err)
	}
	if err := protocol.ValidateAgentID(d.AgentID); err != nil {
		add("agent id: %w", err)
	}
	if _, err := nvml.ParseSpec(d.GPUs); err != nil {
		add("gpus: %w", err)
	}
	if u := d.KernelUserNS; u != "" && u != node.UserNSPrivate && u != node.UserNSHost {
		add("kernel userns %q: want %s or %s", u, node.UserNSPrivate, node.UserNSHost)
	}
	if err := d.vfolderConfig().Validate(); err != nil {
		add("vfolder hosts: %w", err)
	}
	for _, v := range []struct {
		name string
		n    int64
	}{{"vfolder default quota", c.VFolderDefaultQuota}, {"vfolder max upload", c.VFolderMaxUpload}} {
		if v.n < NoLimit {
			add("%s %d: must be positive, or 0 for the default, or %d for none", v.name, v.n, NoLimit)
		}
	}
	for _, ref := range c.Images {
		if err := images.Validate(ref); err != nil {
			add("image: %w", err)
		}
	}
	if c.AuthReplayCacheSize < 0 {
		add("auth replay cache size %d: must not be negative", c.AuthReplayCacheSize)
	}
	for _, v := range []struct {
		name string
		d    time.Duration
	}{{"max wait", c.MaxWait}, {"shutdown timeout", c.ShutdownTimeout}, {"ready timeout", c.ReadyTimeout}, {"vfolder orphan grace", c.VFolderOrphanGrace},
		{"vfolder upload ttl", c.VFolderUploadTTL}, {"lease ttl", c.LeaseTTL},
		{"http read timeout", c.HTTPReadTimeout}, {"http idle timeout", c.HTTPIdleTimeout}, {"upload idle timeout", c.UploadIdleTimeout},
		{"audit full wait", c.AuditFullWait}, {"audit head interval", c.AuditHeadInterval}, {"nats recover interval", c.NATSRecoverInterval}} {
		if v.d < 0 {
			add("%s %s: must not be negative", v.name, v.d)
		}
	}
	if c.HTTPMaxConns < 0 {
		add("http max conns %d: must not be negative", c.HTTPMaxConns)
	}
	if c.HTTPMaxConnsPerIP < 0 {
		add("http max conns per ip %d: must not be negative", c.HTTPMaxConnsPerIP)
	}
	if c.AuditQueue < 0 {
		add("audit queue %d: must not be negative", c.AuditQueue)
	}
	if c.AuditHeadKey != "" && len(c.AuditHeadSinks) == 0 {
		add("audit head key: signed heads need at least one audit head sink to be published to")
	}
	if c.AuditHeadKey == "" && len(c.AuditHeadSinks) > 0 {
		add("audit head sinks: no audit head key to sign heads with")
	}
	for _, spec := range c.AuditHeadSinks {
		if _, err := auditheads.ParseSink(spec); err != nil {
			add("%w", err)
		}
	}
	if c.AuditHeadEvery < 0 {
		add("audit head every %d: must not be negative", c.AuditHeadEvery)
	}
	if err := c.reportsConfig().Validate(); err != nil {
		add("agent liveness: %w", err)
	}
	if err := d.settingDefaults().Check("devserver.config"); err != nil {
		add("run-time settings: %w", err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("devserver: invalid config: %w", err)
	}
	return nil
}

func checkHostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q: want 0 to 65535", port)
	}
	return nil
}

func hasPortZero(addr string) bool {
	_, port, _ := net.SplitHostPort(addr)
	return port == "0"
}

// LogValue is the effective configuration for the start-up log line,
// secrets redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("listen", c.Listen),
		slog.String("tls_cert", c.TLSCertFile),
		slog.String("data_dir", c.DataDir),
		slog.String("store", config.RedactDSN(c.Store)),
		slog.String("nats_listen", c.NATSListen),
		slog.String("app_proxy_listen", c.AppProxyListen),
		slog.String("app_proxy_url", c.AppProxyURL),
		slog.String("app_proxy_key", c.AppProxyKey),
		slog.String("app_proxy_domain", c.AppProxyDomain),
		slog.String("agent_listen", c.AgentListen),
		slog.Bool("no_agent", c.NoAgent),
		slog.String("agent_id", c.AgentID),
		slog.String("gpus", c.GPUs),
		slog.String("podman", c.Podman),
		slog.String("kernel_userns", c.KernelUserNS),
		slog.Any("images", c.Images),
		slog.String("vfolder_hosts", c.VFolderHosts.String()),
		slog.Int64("vfolder_default_quota", c.VFolderDefaultQuota),
		slog.Int64("vfolder_max_upload", c.VFolderMaxUpload),
		slog.Duration("vfolder_orphan_grace", c.VFolderOrphanGrace),
		slog.Duration("vfolder_upload_ttl", c.VFolderUploadTTL),
		slog.Duration("lease_ttl", c.LeaseTTL),
		slog.Duration("max_wait", c.MaxWait),
		slog.Int("auth_replay_cache_size", c.AuthReplayCacheSize),
		slog.Bool("auth_strict_signing_only", c.AuthStrictSigningOnly),
		slog.Duration("shutdown_timeout", c.ShutdownTimeout),
		slog.Int("http_max_conns", c.HTTPMaxConns),
		slog.Int("http_max_conns_per_ip", c.HTTPMaxConnsPerIP),
		slog.Duration("http_read_timeout", c.HTTPReadTimeout),
		slog.Duration("http_idle_timeout", c.HTTPIdleTimeout),
		slog.Duration("upload_idle_timeout", c.UploadIdleTimeout),
		slog.Int("audit_queue", c.AuditQueue),
		slog.Duration("audit_full_wait", c.AuditFullWait),
		slog.String("audit_head_key", c.AuditHeadKey),
		slog.Any("audit_head_sinks", redactSinks(c.AuditHeadSinks)),
		slog.Int("audit_head_every", c.AuditHeadEvery),
		slog.Duration("audit_head_interval", c.AuditHeadInterval),
		slog.Duration("nats_recover_interval", c.NATSRecoverInterval),
		slog.Duration("heartbeat_timeout", c.HeartbeatTimeout),
		slog.Duration("agent_lost_timeout", c.AgentLostTimeout),
	)
}

// redactSinks names the audit head sinks without what may be secret in
// them (an HTTP sink's user info and query).
func redactSinks(specs []string) []string {
	out := make([]string, len(specs))
	for i, spec := range specs {
		out[i] = "(invalid)"
		if sink, err := auditheads.ParseSink(spec); err == nil {
			out[i] = sink.Name()
		}
	}
	return out
}

// limit is a size limit of Config as its users take it: 0 for none.
func limit(n int64) int64 { return max(n, 0) }

// reportsConfig is the agent liveness part of the reports consumer's
// configuration.
func (c Config) reportsConfig() reports.Config {
	return reports.Config{HeartbeatTimeout: c.HeartbeatTimeout, AgentLostTimeout: c.AgentLostTimeout}
}

// settingDefaults are the run-time settings' values until an admin sets
// them: the flags' (a value an admin set wins over them, across restarts).
func (c Config) settingDefaults() domain.SettingDefaults {
	return domain.SettingDefaults{domain.SettingVFolderMaxUpload: strconv.FormatInt(limit(c.VFolderMaxUpload), 10)}
}
