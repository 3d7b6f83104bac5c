package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/agents/node"
	"github.com/cairnhq/cairn/infra/auditheads"
	"github.com/cairnhq/cairn/infra/auth/signing"
	"github.com/cairnhq/cairn/infra/config"
	"github.com/cairnhq/cairn/infra/devserver"
	"github.com/cairnhq/cairn/infra/dispatch/reports"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/images"
)

func newDevCommand() *cobra.Command {
	var cfg devserver.Config
	defaultQuota, maxUpload := config.Bytes(devserver.DefaultVFolderQuota), config.Bytes(devserver.DefaultVFolderMaxUpload)
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run all of Cairn in one process: API, scheduler, embedded NATS, a local Podman agent, SQLite",
		Long: `dev runs Cairn in one process with its embedded defaults: the HTTP API
(--listen), the command handlers, the read models' projectors, the
scheduler, the forwarder and the reports consumer; an embedded NATS
JetStream server carrying the message bus (--nats-listen); the app proxy
that opens sessions' apps and terminals (--app-proxy-listen); one local agent
running sessions as Podman containers (--podman; --no-agent for none); and
the event store, SQLite in --data-dir (or --store names another one).

The first start creates the superadmin's credentials in
<data-dir>/credentials.json (mode 0600) and prints the API URL and the
bearer token. Another machine's agent joins with
"cairn agent --bus nats://<this host>:<port>" once --nats-listen accepts
connections from it (e.g. 0.0.0.0:4222).

Ctrl-C (SIGINT) or SIGTERM stops it cleanly: the HTTP API first, then the
agent (which leaves every container running; the next start adopts them),
then the managers, the bus, NATS and the store.`,
		Example: `  cairn dev
  cairn dev --listen 0.0.0.0:8080 --nats-listen 0.0.0.0:4222 --data-dir /var/lib/cairn-dev
  cairn dev --gpus mock:dgxh100 --image localhost/team/pytorch:2.4
  CAIRN_STORE=postgres://cairn@db/cairn cairn dev --no-agent`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Version = version
			cfg.VFolderDefaultQuota, cfg.VFolderMaxUpload = sizeLimit(defaultQuota), sizeLimit(maxUpload)
			cfg.Logger = slog.Default()
			cfg.Out = os.Stdout
			return devserver.Run(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", devserver.DefaultListen, "HTTP API address, host:port (port 0: any free port)")
	f.StringVar(&cfg.TLSCertFile, "tls-cert", "", "TLS certificate (PEM) the HTTP API serves with (HTTPS only; the Web-UI's cookie is then Secure)")
	f.StringVar(&cfg.TLSKeyFile, "tls-key", "", "TLS private key (PEM) of --tls-cert")
	f.StringVar(&cfg.DataDir, "data-dir", devserver.DefaultDataDir, "directory for the SQLite store, NATS streams, agent records and credentials.json")
	f.StringVar(&cfg.Store, "store", "", "event store DSN (sqlite:///path/cairn.db or postgres://...); default: SQLite in --data-dir")
	f.StringVar(&cfg.NATSListen, "nats-listen", devserver.DefaultNATSListen, "embedded NATS address, host:port; 0.0.0.0:4222 lets other machines' agents join")
	f.StringVar(&cfg.AppProxyListen, "app-proxy-listen", "", "app proxy address, host:port: sessions' apps (Jupyter...) and terminals are reached there (default "+devserver.DefaultAppProxyListen+"; any free port when --listen's port is 0; port 0: any free port; off: none here, a cairn proxy serves them at --app-proxy-url)")
	f.StringVar(&cfg.AppProxyURL, "app-proxy-url", "", "the app proxy's base URL as browsers reach it, for the links the API hands out (default: http://<app proxy address>; required with --app-proxy-listen off)")
	f.StringVar(&cfg.AppProxyKey, "app-proxy-key", "", "file of the key app tickets and cookies are sealed with, made if missing (default <data-dir>/app-proxy.key); a separate cairn proxy takes the same file (--grant-key)")
	f.StringVar(&cfg.AppProxyDomain, "app-proxy-domain", "", "open apps at the root of a host of their own, <app>--<session>.<domain> (a DNS wildcard *.<domain> points at the proxy)")
	f.StringVar(&cfg.AgentListen, "agent-listen", devserver.DefaultAgentListen, "the local agent's HTTP endpoint (logs, apps, terminals; answers only requests the manager signed)")
	f.BoolVar(&cfg.NoAgent, "no-agent", false, "run no local agent (sessions wait for one to join over the bus)")
	f.StringVar(&cfg.AgentID, "agent-id", devserver.DefaultAgentID, "id of the local agent (its containers are labelled cairn.agent=<id>)")
	f.StringVar(&cfg.GPUs, "gpus", devserver.DefaultGPUs, "GPU discovery of the local agent: none, nvml, nvml:<library path>, mock:<dgxa100|dgxh100|dgxh200|dgxb200>")
	f.StringVar(&cfg.Podman, "podman", devserver.DefaultPodman, "Podman service URI of the local agent")
	f.StringVar(&cfg.KernelUserNS, "kernel-userns", node.UserNSPrivate, "user namespace of the local agent's kernels: private (their root is an unprivileged host id) or host (their root is the host's root)")
	f.StringArrayVar(&cfg.Images, "image", nil, "register an image sessions may use, besides "+images.BaseImage+" (repeatable)")
	f.Var(&cfg.VFolderHosts, "vfolder-hosts", "storage hosts of virtual folders, name:path,... (default local:<data-dir>/vfolders); agents on other machines must see them at the same paths")
	f.Var(&defaultQuota, "vfolder-default-quota", "quota of a virtual folder created without one, e.g. 10GiB (0: none)")
	f.Var(&maxUpload, "vfolder-max-upload", "largest file one upload may write, whatever the quotas allow, e.g. 64GiB (0: no limit but the quotas); over it: 413. The default of the run-time setting vfolder.max_upload_size: a value set with PATCH /v1/settings wins")
	f.DurationVar(&cfg.VFolderUploadTTL, "vfolder-upload-ttl", devserver.DefaultVFolderUploadTTL, "a resumable (tus) upload with no byte for this long expires: its bytes are removed and its reservation of the folder's quota released")
	f.DurationVar(&cfg.VFolderOrphanGrace, "vfolder-orphan-grace", devserver.DefaultVFolderOrphanGrace, "age after which a folder directory that no folder owns (a create that crashed) is moved to its host's .cairn-lost+found; the collector runs at start and then every 12 hours")
	f.DurationVar(&cfg.LeaseTTL, "lease-ttl", devserver.DefaultLeaseTTL, "on a PostgreSQL store: how long a singleton's lease (scheduler, audit sequencer, ...) lasts without renewal, about the longest failover after its leader died or hung; the leader renews every third of it and steps down when it cannot, and its writes are fenced by the lease's epoch")
	f.DurationVar(&cfg.MaxWait, "max-wait", devserver.DefaultMaxWait, "longest wait of a query for the read models to reach ?wait_for_position")
	f.IntVar(&cfg.AuthReplayCacheSize, "auth-replay-cache-size", signing.DefaultReplayCacheSize, "strict-mode request signatures remembered to refuse replays (about 125 bytes each); when full, strict requests older than the oldest one kept are refused")
	f.BoolVar(&cfg.AuthStrictSigningOnly, "auth-strict-signing-only", false, "refuse Backend.AI-compatible signed requests (replayable within 15 minutes); accept only strict signing (signMethod=CAIRN1-HMAC-SHA256) and bearer tokens")
	f.IntVar(&cfg.HTTPMaxConns, "http-max-conns", 0, "most HTTP connections served at once, more are answered 503 and closed (0: the open-files limit less what the database and the bus need)")
	f.IntVar(&cfg.HTTPMaxConnsPerIP, "http-max-conns-per-ip", 0, "most HTTP connections from one client address (an IPv6 client's /64), more are answered 429 and closed (0: an eighth of --http-max-conns; behind a reverse proxy set it to --http-max-conns)")
	f.DurationVar(&cfg.HTTPReadTimeout, "http-read-timeout", httpapi.DefaultReadTimeout, "longest read of a request's header and of any body but an upload's")
	f.DurationVar(&cfg.HTTPIdleTimeout, "http-idle-timeout", httpapi.DefaultIdleTimeout, "longest wait for the next request on a keep-alive connection")
	f.DurationVar(&cfg.UploadIdleTimeout, "upload-idle-timeout", httpapi.DefaultBodyIdleTimeout, "a file upload with no byte for this long is cut (408); one making progress may take any time")
	f.IntVar(&cfg.AuditQueue, "audit-queue", devserver.DefaultAuditQueue, "access records kept in memory while the disk is full; once full, requests are answered 503")
	f.DurationVar(&cfg.AuditFullWait, "audit-full-wait", devserver.DefaultAuditFullWait, "how long a request waits for room in a full queue of access records before it is answered 503")
	f.StringVar(&cfg.AuditHeadKey, "audit-head-key", "", "file of the ed25519 key (mode 0600, outside the data directory's backups) that signs the audit chain's head; made by cairn audit keygen (default: no head is signed)")
	f.StringArrayVar(&cfg.AuditHeadSinks, "audit-head-sink", nil, "where signed heads are published (repeatable): file:/path (append-only, ideally on another disk), syslog:, syslog://host:port (UDP), syslog+tcp://host:port, http(s)://URL (POST)")
	f.IntVar(&cfg.AuditHeadEvery, "audit-head-every", auditheads.DefaultEvery, "sign the head once the audit chain has grown by this many records")
	f.DurationVar(&cfg.AuditHeadInterval, "audit-head-interval", auditheads.DefaultInterval, "sign the head at least this often while the audit chain grows")
	f.DurationVar(&cfg.NATSRecoverInterval, "nats-recover-interval", devserver.DefaultNATSRecoverInterval, "how often the embedded NATS checks whether a full disk has room again (to restart JetStream)")
	f.DurationVar(&cfg.HeartbeatTimeout, "heartbeat-timeout", reports.DefaultHeartbeatTimeout,
		"an agent silent this long is disconnected: its sessions show DISCONNECTED, keep their resources, and nothing is destroyed")
	f.DurationVar(&cfg.AgentLostTimeout, "agent-lost-timeout", reports.DefaultAgentLostTimeout,
		"an agent silent this long is given up on: its sessions go to ERROR (agent-lost), their resources are released, and its kernels are removed if it returns")
	return cmd
}

// sizeLimit is a size flag as a devserver limit: 0 on the command line
// means none.
func sizeLimit(b config.Bytes) int64 {
	if b == 0 {
		return devserver.NoLimit
	}
	return int64(b)
}
