// Package natsembed runs a NATS server with JetStream inside the Cairn
// process: the message bus of `cairn dev`. It stores its streams in a given
// directory, listens on a configurable address (port 0 picks a free port),
// raises max_payload so that an event envelope of
// eventstore.MaxEnvelopeSize fits, and shuts down cleanly.
//
// Every client must authenticate: the server trusts the operator and
// accounts of Options.Auth (package busauth) and refuses anonymous
// connections and bearer tokens; each user gets the permissions its
// credentials carry. A second machine's agent joins with the credentials
// an admin issued it by connecting to the URL the server listens on
// (`--bus nats://<this host>:<port>`), which requires Host to be an
// interface the other machine can reach (e.g. "0.0.0.0"; the default is
// loopback only). Production uses an external NATS cluster instead (see
// package bus for the settings it needs).
package natsembed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
)

// Server is a running embedded NATS server.
type Server struct {
	ns       *server.Server
	log      *slog.Logger
	resolver *server.MemAccResolver // nil when insecure
	once     sync.Once
}

// UpdateAccount replaces an account's JWT (signed by the trusted
// operator) on the running server, e.g. with new revocations: clients
// whose credentials it revokes are disconnected and refused from then on.
func (s *Server) UpdateAccount(accountJWT string) error {
	if s.resolver == nil {
		return errors.New("natsembed: the server runs without authentication")
	}
	claims, err := jwt.DecodeAccountClaims(accountJWT)
	if err != nil {
		return fmt.Errorf("natsembed: account JWT: %w", err)
	}
	if err := s.resolver.Store(claims.Subject, accountJWT); err != nil {
		return err
	}
	acc, err := s.ns.LookupAccount(claims.Subject)
	if err != nil {
		return fmt.Errorf("natsembed: account %s: %w", claims.Subject, err)
	}
	s.ns.UpdateAccountClaims(acc, claims)
	return nil
}

// Start validates opts, starts the server and waits until it accepts
// connections with JetStream enabled, at most opts.ReadyTimeout or until
// ctx ends. On failure nothing is left running.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.WithDefaults()
	port := opts.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	sopts := &server.Options{
		ServerName:             opts.ServerName,
		Host:                   opts.Host,
		Port:                   port,
		MaxPayload:             int32(opts.MaxPayload),
		JetStream:              true,
		StoreDir:               opts.StoreDir,
		JetStreamMaxMemory:     opts.MaxMemory,
		JetStreamMaxStore:      opts.MaxStore,
		SyncAlways:             opts.SyncAlways,
		NoSigs:                 true, // the process owns its signals
		DisableJetStreamBanner: true,
	}
	if opts.TLS != nil {
		sopts.TLS, sopts.TLSConfig, sopts.TLSTimeout = true, opts.TLS, 5
	}
	var resolver *server.MemAccResolver
	if a := opts.Auth; a != nil {
		resolver = &server.MemAccResolver{}
		for pub, token := range a.Accounts {
			if err := resolver.Store(pub, token); err != nil {
				return nil, fmt.Errorf("natsembed: account %s: %w", pub, err)
			}
		}
		sopts.TrustedOperators = []*jwt.OperatorClaims{a.Operator}
		sopts.SystemAccount = a.SystemAccount
		sopts.AccountResolver = resolver
	}
	ns, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("natsembed: configure server: %w", err)
	}
	logger := &serverLogger{log: opts.Logger.With("component", "nats")}
	ns.SetLoggerV2(logger, false, false, false)

	s := &Server{ns: ns, log: opts.Logger, resolver: resolver}
	ns.Start()
	if err := s.waitReady(ctx, opts.ReadyTimeout, logger); err != nil {
		s.Shutdown()
		return nil, err
	}
	s.log.Info("embedded NATS started", "url", s.ClientURL(), "options", opts.logValue())
	return s, nil
}

// waitReady polls for readiness in short steps so that ctx is honoured.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration, logger *serverLogger) error {
	deadline := time.Now().Add(timeout)
	for {
		if s.ns.ReadyForConnections(50*time.Millisecond) && s.ns.JetStreamEnabled() {
			return nil
		}
		if msg := logger.fatal(); msg != "" {
			return fmt.Errorf("natsembed: server failed to start: %s", msg)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("natsembed: waiting for the server: %w", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("natsembed: server not ready with JetStream after %s", timeout)
		}
	}
}

// ClientURL is the URL clients in this process or on this machine connect
// to: nats://host:port with the port actually bound. When the server listens
// on every interface (0.0.0.0 or ::), the host is the loopback address;
// other machines use this machine's address with Port.
func (s *Server) ClientURL() string {
	host := "127.0.0.1"
	if addr, ok := s.ns.Addr().(*net.TCPAddr); ok && !addr.IP.IsUnspecified() {
		host = addr.IP.String()
	}
	return "nats://" + net.JoinHostPort(host, strconv.Itoa(s.Port()))
}

// Port is the client port the server is bound to.
func (s *Server) Port() int {
	if addr, ok := s.ns.Addr().(*net.TCPAddr); ok {
		return addr.Port
	}
	return 0
}

// Shutdown closes every client connection, stops the server and waits until
// it has stopped and flushed JetStream's state to StoreDir. It is safe to
// call more than once and from several goroutines.
func (s *Server) Shutdown() {
	s.once.Do(func() {
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
		s.log.Info("embedded NATS stopped")
	})
}
