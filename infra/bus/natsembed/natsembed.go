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
//
// # A full disk
//
// When a write to its store finds the disk full, a stream refuses every
// later message (publishes time out) until JetStream restarts, and NATS may
// shut JetStream down altogether. The server watches the store's disk every
// Options.RecoverInterval: once a full disk has room again (or JetStream
// was shut down), it restarts JetStream, which comes back with the streams
// and consumers it stored, without a restart of the process. Degraded
// reports the state meanwhile. A disk that fills and empties between two
// checks goes unnoticed: its streams stay stuck until the next restart.
package natsembed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
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
	// stop ends watch, which closes watched when it returns.
	stop, watched chan struct{}
	// degraded is set by watch while the store's disk is full.
	degraded atomic.Pointer[error]
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

	s := &Server{ns: ns, log: opts.Logger, resolver: resolver, stop: make(chan struct{}), watched: make(chan struct{})}
	ns.Start()
	if err := s.waitReady(ctx, opts.ReadyTimeout, logger); err != nil {
		close(s.watched)
		s.Shutdown()
		return nil, err
	}
	// The limits JetStream started with (a share of the disk and memory
	// when opts leave them 0): enabling it again on a disk with little
	// room must not shrink them for the rest of the process's life.
	started := s.ns.JetStreamConfig()
	go s.watch(opts, started.MaxStore, started.MaxMemory)
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

// Degraded returns why JetStream may refuse to store messages (its
// store's disk was full, or NATS shut it down), nil when it works.
func (s *Server) Degraded() error {
	if p := s.degraded.Load(); p != nil {
		return *p
	}
	if !s.ns.JetStreamEnabled() {
		return errNotRunning
	}
	return nil
}

var (
	errNotRunning = errors.New("JetStream is shut down (NATS does so when its store finds the disk full); it restarts once there is room")
	errStoreFull  = errors.New("the disk of JetStream's store is full: streams refuse messages; JetStream restarts once there is room")
)

// fullBelow is the room left on the store's file system under which the
// disk counts as full.
const fullBelow = 1 << 20

// watch restarts JetStream, checking every opts.RecoverInterval, once the
// store's disk has room again after it was full, or after NATS shut
// JetStream down: a stream whose write failed on a full disk keeps
// refusing messages until JetStream restarts (NATS 2.15), and NATS may
// shut JetStream down on a full disk; both come back from what the store
// holds, without a restart of the process.
func (s *Server) watch(opts Options, maxStore, maxMemory int64) {
	defer close(s.watched)
	t := time.NewTicker(opts.RecoverInterval)
	defer t.Stop()
	seenFull := false
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		free, err := freeBytes(opts.StoreDir)
		full := err == nil && free < fullBelow
		running := s.ns.JetStreamEnabled()
		switch {
		case full:
			if !seenFull {
				s.log.Error("embedded NATS: the disk of JetStream's store is full; JetStream restarts once there is room", "store_dir", opts.StoreDir, "free_bytes", free)
				s.degraded.Store(&errStoreFull)
			}
			seenFull = true
			continue
		case running && !seenFull:
			continue
		}
		s.log.Warn("embedded NATS: restarting JetStream", "store_dir", opts.StoreDir, "was_running", running, "disk_was_full", seenFull)
		if running {
			if err := s.ns.ShutdownJetStream(); err != nil {
				s.log.Warn("embedded NATS: JetStream did not shut down", "error", err)
				continue
			}
		}
		// As the server started it (Start), with the limits it chose.
		err = s.ns.EnableJetStream(&server.JetStreamConfig{
			StoreDir: opts.StoreDir, MaxMemory: maxMemory, MaxStore: maxStore,
			SyncAlways: opts.SyncAlways, Strict: true, CompressOK: true,
		})
		if err != nil {
			s.log.Warn("embedded NATS: JetStream cannot be enabled yet", "error", err)
			continue
		}
		s.log.Info("embedded NATS: JetStream restarted")
		seenFull = false
		s.degraded.Store(nil)
	}
}

// freeBytes is the room an unprivileged writer has left on dir's file
// system.
func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// Shutdown closes every client connection, stops the server and waits until
// it has stopped and flushed JetStream's state to StoreDir. It is safe to
// call more than once and from several goroutines.
func (s *Server) Shutdown() {
	s.once.Do(func() {
		// The server shuts JetStream down too: watch must not enable it.
		close(s.stop)
		<-s.watched
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
		s.log.Info("embedded NATS stopped")
	})
}
