package devserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/appproxy"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/web"
)

// appProxyKeyFile holds the key that seals the app proxy's tickets and
// cookies, in the data directory (0600).
const appProxyKeyFile = "app-proxy.key"

// startAppProxy serves the app proxy on Config.AppProxyListen: sessions'
// apps and terminals, routed by the sessions read model to the agents'
// endpoints, its audit records written by access. It sets the opener the
// API mints app links with. With AppProxyListen off it only sets the
// opener, for the `cairn proxy` at AppProxyURL that shares the key.
func (s *server) startAppProxy(reg prometheus.Registerer, access *accesslog.Writer) error {
	keyFile := s.cfg.AppProxyKey
	if keyFile == "" {
		keyFile = filepath.Join(s.cfg.DataDir, appProxyKeyFile)
	}
	key, err := appproxy.LoadOrCreateKey(keyFile)
	if err != nil {
		return err
	}
	keys, err := appproxy.NewKeyring(key)
	if err != nil {
		return err
	}
	if s.cfg.AppProxyListen == AppProxyOff {
		u, err := url.Parse(s.cfg.AppProxyURL)
		if err != nil {
			return fmt.Errorf("app proxy url: %w", err)
		}
		u.Path = ""
		s.appProxyURL = u.String()
		s.appOpener = &appproxy.Opener{Keys: keys, PublicURL: u, Domain: s.cfg.AppProxyDomain, Now: s.cfg.Clock}
		s.log.Info("app proxy served elsewhere", "url", s.appProxyURL, "domain", s.cfg.AppProxyDomain)
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.AppProxyListen)
	if err != nil {
		return fmt.Errorf("app proxy: %w", err)
	}
	public := s.cfg.AppProxyURL
	if public == "" {
		public = "http://" + localAddr(ln.Addr())
	}
	u, err := url.Parse(public)
	if err != nil {
		ln.Close()
		return fmt.Errorf("app proxy url: %w", err)
	}
	u.Path = ""
	p, err := appproxy.New(appproxy.Config{
		// This process projects the sessions read model itself, so its
		// DB's version sees every write that could end a route.
		Keys: keys, Routes: appproxy.NewCachedRoutes(appproxy.SessionRoutes{Sessions: s.models.Sessions}, s.db), Agents: s.addresses,
		Sign: func(req *http.Request, agentID string) error {
			return s.busKeys.SignAgentRequest(req, agentID, time.Now())
		},
		Record:       func(ctx context.Context, rec audit.Record) error { return access.Write(ctx, rec) },
		Logger:       s.log,
		CookieSecure: u.Scheme == "https",
		PublicHost:   u.Host,
		Registerer:   reg,
		TerminalPage: web.TerminalPage(),
		Domain:       s.cfg.AppProxyDomain,
		Now:          s.cfg.Clock,
	})
	if err != nil {
		ln.Close()
		return err
	}
	lln, err := httpapi.NewListener(ln, s.listenerConfig("app-proxy", reg))
	if err != nil {
		ln.Close()
		return err
	}
	s.appProxyURL = u.String()
	s.appOpener = &appproxy.Opener{Keys: keys, PublicURL: u, Domain: s.cfg.AppProxyDomain, Now: s.cfg.Clock}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: s.cfg.HTTPIdleTimeout}
	s.parts.goRun("app proxy", func(ctx context.Context) error {
		served := make(chan error, 1)
		go func() { served <- srv.Serve(lln) }()
		select {
		case err := <-served:
			return err
		case <-ctx.Done():
		}
		// Upgraded connections (terminals, notebooks) are not waited for:
		// hijacked, they are the agent's and the browser's; the browser
		// reconnects to whichever proxy serves next.
		shut, cancel := context.WithTimeout(context.Background(), httpShutdownTimeout)
		defer cancel()
		err := srv.Shutdown(shut)
		p.CloseIdle()
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		return err
	})
	s.log.Info("app proxy serving", "listen", ln.Addr().String(), "url", s.appProxyURL)
	return nil
}
