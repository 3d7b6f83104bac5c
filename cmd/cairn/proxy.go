package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/infra/proxyserver"
)

func newProxyCommand() *cobra.Command {
	var cfg proxyserver.Config
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Run the app proxy on its own: sessions' apps and terminals, routed by the shared read models",
		Long: `proxy serves only the app proxy: the web apps (Jupyter, pre-opened ports...)
and terminals of sessions, which browsers open with the links the API hands
out (POST /v1/sessions/{id}/apps/{app}). App traffic goes from the browser
to this process and on to the agent that runs the session, signed as the
manager signs its requests; never through the API or the scheduler.

It keeps no state of its own that matters: routes come from the read models
of the PostgreSQL event store (--store), opened read-only; the agents'
endpoints from their announcements on the bus (--bus, with credentials that
may read the reports only); tickets and app cookies are sealed with the key file the API
uses (--grant-key; cairn dev --app-proxy-key). It signs its requests to
agents with a key of its own (--agent-key), which the manager's account key
granted ("cairn bus app-proxy-key"): agents let it reach their kernels' apps
and terminals, nothing else, and the proxy never holds the account key.
A restarted proxy serves the
same URLs with the cookies browsers hold, and as many proxies as you like
may serve the same Cairn (give each its own --name).

It listens on loopback unless it serves TLS (--tls-cert, --tls-key) or a TLS
terminator stands in front (--behind-tls). With --domain, each app of each
session is also served at the root of a host of its own,
<app>--<session id without dashes>.<domain> (a DNS wildcard *.<domain> must
point at the proxy), and the links the API hands out use those hosts when
cairn dev runs with the same --app-proxy-domain.`,
		Example: `  cairn proxy --store 'postgres://cairn@db/cairn?schema=cairn' \
    --grant-key /etc/cairn/app-proxy.key --agent-key /etc/cairn/proxy-agent.key \
    --bus nats://manager:4222 --bus-credentials /etc/cairn/proxy-bus.creds \
    --bus-ca /etc/cairn/bus-ca.pem --listen 0.0.0.0:443 --tls-cert cert.pem --tls-key key.pem \
    --public-url https://apps.example.com --domain apps.example.com`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Logger = slog.Default()
			cfg.Ready = func(proxy, metrics string) {
				fmt.Fprintf(cmd.OutOrStdout(), "app proxy  %s\nmetrics    %s\n", proxy, metrics)
			}
			return proxyserver.Run(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", proxyserver.DefaultListen, "address, host:port (port 0: any free port); beyond loopback only with --tls-cert or --behind-tls")
	f.StringVar(&cfg.PublicURL, "public-url", "", "base URL browsers reach the proxy at, http(s)://host[:port] (default: from --listen)")
	f.StringVar(&cfg.Domain, "domain", "", "serve each session's app at the root of <app>--<session>.<domain> too (needs a DNS wildcard *.<domain>)")
	f.StringVar(&cfg.Store, "store", "", "the PostgreSQL event store's DSN, postgres://...[?schema=NAME] (its read models are read, never written)")
	f.StringVar(&cfg.GrantKeyFile, "grant-key", "", "file of the hex key tickets and app cookies are sealed with: the one the API uses (cairn dev: <data-dir>/app-proxy.key or --app-proxy-key)")
	f.StringVar(&cfg.AgentKeyFile, "agent-key", "", "the proxy's key file for its requests to agents, which agents accept for their apps and terminals only (cairn bus app-proxy-key makes one)")
	f.StringVar(&cfg.BusURL, "bus", "", "the manager's NATS server, nats://host:4222: agents announce their endpoints there")
	f.StringVar(&cfg.BusCredentialsFile, "bus-credentials", "", "the proxy's NATS .creds file, which may read the agents' reports only (cairn bus app-proxy-key --credentials-out makes one)")
	f.StringVar(&cfg.BusCAFile, "bus-ca", "", "CA certificate (PEM) of the bus server's TLS certificate (cairn dev: <data-dir>/bus-keys/bus-ca.pem)")
	f.StringVar(&cfg.Name, "name", proxyserver.DefaultName, "this proxy's name, stable across restarts and unique among proxies (its bus consumer is app-proxy-<name>)")
	f.StringVar(&cfg.DataDir, "data-dir", proxyserver.DefaultDataDir, "directory that keeps the agents' endpoints learned from the bus")
	f.StringVar(&cfg.MetricsListen, "metrics-listen", proxyserver.DefaultMetricsListen, "loopback address of /metrics (Prometheus), host:port, or off")
	f.StringVar(&cfg.TLSCertFile, "tls-cert", "", "TLS certificate (PEM) to serve with")
	f.StringVar(&cfg.TLSKeyFile, "tls-key", "", "TLS private key (PEM) of --tls-cert")
	f.BoolVar(&cfg.BehindTLS, "behind-tls", false, "listen beyond loopback without TLS: a TLS terminator in front forwards to it (set --public-url https://...)")
	f.IntVar(&cfg.HTTPMaxConns, "http-max-conns", 0, "most connections served at once, more are answered 503 (0: from the open-files limit)")
	f.IntVar(&cfg.HTTPMaxConnsPerIP, "http-max-conns-per-ip", 0, "most connections from one client address, more are answered 429 (0: an eighth of --http-max-conns)")
	return cmd
}
