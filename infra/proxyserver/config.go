package proxyserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"

	"github.com/cairnhq/cairn/infra/appproxy"
	"github.com/cairnhq/cairn/infra/bus"
)

// Defaults of Config.
const (
	DefaultListen        = "127.0.0.1:8081"
	DefaultMetricsListen = "127.0.0.1:9181"
	DefaultName          = "default"
	DefaultDataDir       = "./data/app-proxy"
)

// Config is what `cairn proxy` needs. Fields without a default are
// required unless said otherwise.
type Config struct {
	// Listen is the proxy's address, host:port (default DefaultListen).
	// Beyond loopback it needs TLS (TLSCertFile and TLSKeyFile) or
	// BehindTLS.
	Listen string
	// PublicURL is the proxy's base URL as browsers reach it (default
	// http(s)://<Listen's bound address>): the Origin a write or WebSocket
	// must come from, and whether the app cookie is Secure.
	PublicURL string
	// Domain turns on the subdomain mode for apps: <label>.<Domain> is one
	// app of one session (appproxy.HostLabel). Empty: paths only.
	Domain string
	// Store is the PostgreSQL event store's DSN (postgres://...?schema=),
	// the one the Cairn whose apps are served uses.
	Store string
	// GrantKeyFile holds the hex key that seals tickets and app cookies:
	// the API that mints tickets must use the same file (`cairn dev
	// --app-proxy-key`). It must exist.
	GrantKeyFile string
	// AgentKeyFile holds the proxy's own key for signing its requests to
	// agents, with the account key's grant of it (`cairn bus
	// app-proxy-key`): agents accept it for their apps and terminals only.
	AgentKeyFile string
	// BusURL, BusCredentialsFile and BusCAFile reach the manager's bus,
	// where agents announce their HTTP endpoints. The credentials need
	// only read the reports (`cairn bus app-proxy-key --credentials-out`).
	BusURL             string
	BusCredentialsFile string
	BusCAFile          string
	// Name tells this proxy's durable consumer of the reports,
	// app-proxy-<Name>, apart from other proxies' (default DefaultName); it
	// must stay the same across restarts.
	Name string
	// DataDir keeps the agents' addresses learned from the bus, so a
	// restarted proxy routes at once (default DefaultDataDir).
	DataDir string
	// MetricsListen serves /metrics, host:port (default
	// DefaultMetricsListen; "off": none).
	MetricsListen string
	// TLSCertFile and TLSKeyFile serve the proxy over TLS.
	TLSCertFile string
	TLSKeyFile  string
	// BehindTLS allows a listener beyond loopback without TLS of its own:
	// a TLS terminator forwards to it (the app cookie is then Secure).
	BehindTLS bool
	// HTTPMaxConns and HTTPMaxConnsPerIP bound the connections served
	// (0: httpapi's defaults).
	HTTPMaxConns      int
	HTTPMaxConnsPerIP int

	Logger *slog.Logger `json:"-"`
	// Ready, if set, receives the bound addresses once the proxy serves.
	Ready func(proxy, metrics string) `json:"-"`
}

// WithDefaults fills the zero fields that have defaults.
func (c Config) WithDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.MetricsListen == "" {
		c.MetricsListen = DefaultMetricsListen
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	d := c.WithDefaults()
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	host, _, err := net.SplitHostPort(d.Listen)
	if err != nil {
		add("listen %q: %w", d.Listen, err)
	} else if !isLoopback(host) && d.TLSCertFile == "" && !d.BehindTLS {
		add("listen %q is beyond loopback: serve TLS (--tls-cert, --tls-key) or say a TLS terminator stands in front (--behind-tls)", d.Listen)
	}
	if (d.TLSCertFile == "") != (d.TLSKeyFile == "") {
		add("tls: give both the certificate and the key")
	}
	if d.MetricsListen != "off" {
		if mh, _, err := net.SplitHostPort(d.MetricsListen); err != nil {
			add("metrics listen %q: %w", d.MetricsListen, err)
		} else if !isLoopback(mh) {
			add("metrics listen %q: the metrics are served without authentication, on loopback only", d.MetricsListen)
		}
	}
	if d.PublicURL != "" {
		if u, err := url.Parse(d.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			add("public url %q: want http(s)://host[:port], no path", d.PublicURL)
		}
	}
	if d.Domain != "" {
		if err := appproxy.CheckDomain(d.Domain); err != nil {
			add("domain: %w", err)
		}
	}
	if !strings.HasPrefix(d.Store, "postgres://") && !strings.HasPrefix(d.Store, "postgresql://") {
		add("store %q: want the PostgreSQL event store's postgres:// DSN (the proxy reads its read models; a SQLite store is one process's)", redact(d.Store))
	}
	if d.GrantKeyFile == "" {
		add("grant key: name the file the API seals app tickets with")
	}
	if d.AgentKeyFile == "" {
		add("agent key: name the app proxy key file agents accept signatures of (cairn bus app-proxy-key makes one)")
	}
	if err := bus.ValidateID("name", Durable(d.Name)); err != nil {
		add("name %q: %w", d.Name, err)
	}
	if d.BusURL == "" {
		add("bus: name the manager's NATS server (agents announce their endpoints there)")
	}
	return errors.Join(errs...)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redact drops the passwords of a DSN or of a comma-separated list of
// server URLs, for messages.
func redact(dsn string) string {
	parts := strings.Split(dsn, ",")
	for i, p := range parts {
		u, err := url.Parse(p)
		if err != nil {
			parts[i] = "(unparsable)"
			continue
		}
		parts[i] = u.Redacted()
	}
	return strings.Join(parts, ",")
}
