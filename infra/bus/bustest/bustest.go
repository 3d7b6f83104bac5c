// Package bustest starts the bus for tests as `cairn dev` runs it: an
// embedded NATS server that trusts a fresh set of keys (package busauth)
// and refuses anyone without credentials, and hands out credentials files
// for a manager and for agents.
package bustest

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/bus/busauth"
	"github.com/cairnhq/cairn/infra/bus/natsembed"
)

// Server is a running authenticated embedded NATS server.
type Server struct {
	*natsembed.Server
	Keys *busauth.Keys
	// CAFile verifies the server's TLS certificate, when it listens
	// beyond loopback (and so uses TLS); empty otherwise.
	CAFile string
	dir    string
}

// Start starts the server in a temporary directory, on a free loopback
// port unless opts change it; it stops when the test ends.
func Start(t testing.TB, log *slog.Logger, opts ...func(*natsembed.Options)) *Server {
	t.Helper()
	dir := t.TempDir()
	keys, err := busauth.LoadOrCreateKeys(filepath.Join(dir, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	trust, err := keys.Trust(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := natsembed.Options{StoreDir: filepath.Join(dir, "nats"), Auth: &trust, Logger: log}
	for _, f := range opts {
		f(&o)
	}
	caFile := ""
	if o.Host != "" && o.Host != "127.0.0.1" && o.TLS == nil {
		tlsCfg, err := busauth.LoadOrCreateServerTLS(filepath.Join(dir, "keys"), []string{o.Host})
		if err != nil {
			t.Fatal(err)
		}
		o.TLS, caFile = tlsCfg.Config, tlsCfg.CAFile
	}
	srv, err := natsembed.Start(ctx, o)
	if err != nil {
		t.Fatalf("start NATS: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	return &Server{Server: srv, Keys: keys, CAFile: caFile, dir: dir}
}

// ManagerCredentials writes a manager's credentials file and returns its
// path.
func (s *Server) ManagerCredentials(t testing.TB) string {
	t.Helper()
	creds, err := s.Keys.ManagerCredentials("test")
	if err != nil {
		t.Fatal(err)
	}
	return s.write(t, "manager", creds)
}

// AgentCredentials writes agentID's credentials file and returns its path
// and the agent's public user key.
func (s *Server) AgentCredentials(t testing.TB, agentID string) (path, userKey string) {
	t.Helper()
	creds, key, err := s.Keys.AgentCredentials(agentID)
	if err != nil {
		t.Fatal(err)
	}
	return s.write(t, "agent-"+agentID, creds), key
}

func (s *Server) write(t testing.TB, name string, creds []byte) string {
	t.Helper()
	f, err := createTemp(s.dir, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := busauth.WriteSecretFile(f, creds); err != nil {
		t.Fatal(err)
	}
	return f
}
