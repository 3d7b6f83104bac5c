package natsembed

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/busauth"
)

// Defaults applied by Options.WithDefaults to zero fields.
const (
	// DefaultHost listens on loopback only: set Host to "0.0.0.0" (or an
	// interface address) to let agents on other machines connect.
	DefaultHost = "127.0.0.1"
	// DefaultServerName names the server in logs and JetStream metadata.
	DefaultServerName = "cairn-embedded"
	// DefaultMaxPayload is NATS's max_payload for the embedded server: the
	// largest message (payload plus headers) a client may publish. NATS's own
	// default is 1 MiB, too small for an event envelope of
	// eventstore.MaxEnvelopeSize; 4 MiB leaves room and stays under the
	// 8 MiB above which NATS warns.
	DefaultMaxPayload = 4 << 20
	// DefaultReadyTimeout bounds how long Start waits for the server to
	// accept connections with JetStream enabled.
	DefaultReadyTimeout = 10 * time.Second
	// DefaultRecoverInterval is how often a server whose JetStream has
	// shut down (out of storage) tries to enable it again.
	DefaultRecoverInterval = 5 * time.Second

	// maxMaxPayload is NATS's max_pending default (64 MiB): max_payload may
	// not exceed it.
	maxMaxPayload = 64 << 20
)

// Options configure the embedded server. StoreDir is required, and Auth
// unless Insecure; every other zero field takes its default.
type Options struct {
	// Auth is the operator and accounts the server trusts: only users with
	// credentials signed by them connect, each with its permissions
	// (package busauth). Required unless Insecure.
	Auth *busauth.Trust
	// Insecure lets anyone who reaches the port connect and do anything,
	// without credentials: for the bus's own tests only. It is refused on
	// any Host but loopback.
	Insecure bool
	// TLS encrypts every client connection (busauth.LoadOrCreateServerTLS
	// makes one). Required when Host is not loopback: credentials are
	// never replayable (clients sign a nonce), but messages would travel
	// in clear.
	TLS *tls.Config
	// Host is the interface to listen on (default 127.0.0.1, loopback only).
	Host string
	// Port is the client port; 0 picks a free port (see Server.ClientURL).
	Port int
	// StoreDir is the directory JetStream keeps its streams in. Required.
	StoreDir string
	// ServerName names the server (default "cairn-embedded").
	ServerName string
	// MaxPayload is the largest message a client may publish, in bytes
	// (default 4 MiB). It must be at least bus.MaxMessageSize.
	MaxPayload int
	// MaxMemory and MaxStore cap JetStream's memory and disk use, in bytes;
	// 0 lets the server choose (a share of the machine's memory and disk).
	MaxMemory int64
	MaxStore  int64
	// SyncAlways makes JetStream fsync every message before acknowledging
	// it. By default it syncs every two minutes: a crash of the machine (not
	// of the process) may then lose recently published messages, which the
	// forwarder republishes from the event store.
	SyncAlways bool
	// ReadyTimeout bounds how long Start waits for readiness (default 10s).
	ReadyTimeout time.Duration
	// RecoverInterval is how often the server tries to enable JetStream
	// again after it shut it down, which NATS does when a write to the
	// store finds the disk full (default 5s).
	RecoverInterval time.Duration
	// Logger receives the server's logs (default slog.Default()). NATS's
	// notices are logged at debug level, its warnings and errors as such.
	Logger *slog.Logger
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.Host == "" {
		o.Host = DefaultHost
	}
	if o.ServerName == "" {
		o.ServerName = DefaultServerName
	}
	if o.MaxPayload == 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if o.RecoverInterval == 0 {
		o.RecoverInterval = DefaultRecoverInterval
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Validate reports every problem of o at once. Zero fields other than
// StoreDir are valid (they take their defaults).
func (o Options) Validate() error {
	var errs []error
	if o.Host != "" && strings.ContainsAny(o.Host, " /:") && net.ParseIP(o.Host) == nil {
		errs = append(errs, fmt.Errorf("host %q: want a host name or an IP address, without a port", o.Host))
	}
	if o.Port < 0 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d: must be between 0 (any free port) and 65535", o.Port))
	}
	switch {
	case o.Auth == nil && !o.Insecure:
		errs = append(errs, errors.New("auth: must be set (the bus's operator and accounts, package busauth); Insecure only for tests"))
	case o.Auth != nil && o.Insecure:
		errs = append(errs, errors.New("auth and insecure: choose one"))
	case o.Auth != nil && (o.Auth.Operator == nil || o.Auth.SystemAccount == "" || len(o.Auth.Accounts) == 0):
		errs = append(errs, errors.New("auth: incomplete (operator, system account and accounts are required)"))
	case o.Insecure && !isLoopback(o.Host):
		errs = append(errs, fmt.Errorf("insecure: refused on host %q: an unauthenticated bus listens on loopback only", o.Host))
	}
	if o.TLS == nil && !isLoopback(o.Host) {
		errs = append(errs, fmt.Errorf("tls: required to listen on %q, beyond loopback", o.Host))
	}
	if o.StoreDir == "" {
		errs = append(errs, errors.New("store dir: must be set (JetStream keeps its streams there)"))
	}
	if strings.ContainsAny(o.ServerName, " \t\r\n") {
		errs = append(errs, fmt.Errorf("server name %q: must not contain whitespace", o.ServerName))
	}
	if o.MaxPayload != 0 && (o.MaxPayload < bus.MaxMessageSize || o.MaxPayload > maxMaxPayload) {
		errs = append(errs, fmt.Errorf("max payload %d: must be between %d (bus.MaxMessageSize) and %d bytes", o.MaxPayload, bus.MaxMessageSize, maxMaxPayload))
	}
	if o.MaxMemory < 0 {
		errs = append(errs, fmt.Errorf("max memory %d: must not be negative", o.MaxMemory))
	}
	if o.MaxStore < 0 {
		errs = append(errs, fmt.Errorf("max store %d: must not be negative", o.MaxStore))
	}
	if o.ReadyTimeout < 0 {
		errs = append(errs, fmt.Errorf("ready timeout %s: must not be negative", o.ReadyTimeout))
	}
	if o.RecoverInterval < 0 {
		errs = append(errs, fmt.Errorf("recover interval %s: must not be negative", o.RecoverInterval))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("natsembed: invalid options: %w", err)
	}
	return nil
}

// isLoopback: the default host, localhost or a loopback address.
func isLoopback(host string) bool {
	if host == "" || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// logValue is the effective configuration, for the start-up log line.
func (o Options) logValue() slog.Value {
	return slog.GroupValue(
		slog.String("host", o.Host),
		slog.Int("port", o.Port),
		slog.String("store_dir", o.StoreDir),
		slog.String("server_name", o.ServerName),
		slog.Int("max_payload", o.MaxPayload),
		slog.Int64("max_memory", o.MaxMemory),
		slog.Int64("max_store", o.MaxStore),
		slog.Bool("sync_always", o.SyncAlways),
		slog.Duration("recover_interval", o.RecoverInterval),
		slog.Bool("authenticated", o.Auth != nil),
		slog.Bool("tls", o.TLS != nil),
	)
}
