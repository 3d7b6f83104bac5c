package appbench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"time"

	"github.com/cairnhq/cairn/infra/appproxy"
)

// JupyterApp is the python image's notebook app (its service port).
const JupyterApp = "jupyter"

// JupyterStaticPath is the file under the notebook's base path that the
// HTTP measurement GETs: a favicon of the notebook's own static files,
// which Jupyter serves without its token, so the same request works
// through the proxy (where the agent adds the token) and straight to the
// published port (where nothing does).
const JupyterStaticPath = "/static/base/images/favicon-notebook.ico"

// JupyterLabel names the Jupyter HTTP scenario in the report.
const JupyterLabel = "Jupyter static file"

// JupyterResult is the time from POST /v1/sessions of the python image to
// the notebook's first 200 through the proxy, then the HTTP throughput of
// one of its static files through the proxy vs directly, or why they were
// not measured.
type JupyterResult struct {
	Image   string
	Elapsed time.Duration
	// HTTP is JupyterStaticPath through both ways in; nil when the
	// notebook was not reached.
	HTTP *HTTPResult
	// Skipped says why nothing was measured (the image is absent, or
	// --jupyter=false).
	Skipped string
	// Failed says what went wrong when the image was there but the
	// notebook could not be reached or measured.
	Failed string
}

// measureJupyter requests a session of cfg.JupyterImage and times it
// until GET <app>/api/status answers 200 through the proxy; then it
// measures JupyterStaticPath as measureHTTP does the echo app, the
// direct way being the jupyter port's host port under the same base path.
// The session is terminated afterwards (not timed). Jupyter's token is
// Cairn's business: the agent sends it, the benchmark never sees it.
func measureJupyter(ctx context.Context, s *Server, cfg Config) (JupyterResult, error) {
	res := JupyterResult{Image: cfg.JupyterImage}
	start := time.Now()
	var created session
	if err := s.call(ctx, "POST", "/v1/sessions", map[string]any{
		"image": cfg.JupyterImage, "resources": map[string]any{"cpu": 1, "mem": "1g"},
	}, http.StatusCreated, &created); err != nil {
		return res, err
	}
	defer func() {
		var ended session
		if err := s.call(context.WithoutCancel(ctx), "DELETE", "/v1/sessions/"+created.ID, nil, http.StatusAccepted, &ended); err == nil {
			_, _ = s.awaitSession(context.WithoutCancel(ctx), created.ID, ended.Position, cfg.Timeout, "TERMINATED")
		}
	}()
	running, err := s.awaitSession(ctx, created.ID, created.Position, cfg.Timeout, "RUNNING")
	if err != nil {
		return res, err
	}
	link, err := s.openApp(ctx, created.ID, JupyterApp)
	if err != nil {
		return res, err
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		// The ticket's redirect sets the cookie; what Jupyter answers
		// there (a redirect to its tree, or 502 while it starts) is not
		// followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if _, err := get(ctx, browser, link); err != nil {
		return res, err
	}
	appPath := "/v1/sessions/" + created.ID + "/apps/" + JupyterApp
	if err := awaitOK(ctx, browser, s.ProxyURL+appPath+"/api/status", cfg.Timeout); err != nil {
		return res, fmt.Errorf("jupyter: %w", err)
	}
	res.Elapsed = time.Since(start)
	cfg.progress("Jupyter usable %s after POST /v1/sessions", res.Elapsed.Round(time.Millisecond))

	app, err := jupyterApp(s, running, appPath, jar)
	if err != nil {
		return res, err
	}
	size, err := staticSize(ctx, app, cfg.Timeout)
	if err != nil {
		return res, err
	}
	h, err := measureHTTP(ctx, app, cfg, JupyterStaticPath, size)
	if err != nil {
		return res, fmt.Errorf("jupyter HTTP: %w", err)
	}
	h.App = JupyterLabel
	res.HTTP = &h
	return res, nil
}

// jupyterApp is the two ways to the notebook of a running session: the
// proxy with the app cookie in jar, and the jupyter port's host port with
// the same base path (Jupyter serves only under it).
func jupyterApp(s *Server, running session, appPath string, jar http.CookieJar) (*App, error) {
	hostPort := 0
	for _, k := range running.Kernels {
		for _, p := range k.ServicePorts {
			if p.Name == JupyterApp {
				hostPort = p.HostPort
			}
		}
	}
	if hostPort == 0 {
		return nil, fmt.Errorf("session %s shows no host port for %s", running.ID, JupyterApp)
	}
	app := &App{SessionID: running.ID, ProxyBase: s.ProxyURL + appPath,
		DirectBase: "http://127.0.0.1:" + strconv.Itoa(hostPort) + appPath}
	u, _ := url.Parse(app.ProxyBase + "/")
	for _, c := range jar.Cookies(u) {
		if c.Name == appproxy.CookieName {
			app.Cookie = c
		}
	}
	if app.Cookie == nil {
		return nil, fmt.Errorf("the proxy set no %s cookie for %s", appproxy.CookieName, app.ProxyBase)
	}
	return app, nil
}

// staticSize GETs JupyterStaticPath once each way in and returns its
// length: both must answer 200 with the same non-empty body length, which
// every measured request is then checked against.
func staticSize(ctx context.Context, app *App, timeout time.Duration) (int64, error) {
	var sizes [2]int64
	for i, w := range []Way{Proxy, Direct} {
		c := newClients(app, w, 1)
		c.client.Timeout = timeout
		req, err := http.NewRequestWithContext(ctx, "GET", c.base+JupyterStaticPath, nil)
		if err != nil {
			return 0, err
		}
		if c.cookie != nil {
			req.AddCookie(c.cookie)
		}
		res, err := c.client.Do(req)
		if err != nil {
			return 0, fmt.Errorf("jupyter %s: %w", w, err)
		}
		n, err := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		c.client.CloseIdleConnections()
		switch {
		case err != nil:
			return 0, fmt.Errorf("jupyter %s: GET %s: %w", w, c.base+JupyterStaticPath, err)
		case res.StatusCode != http.StatusOK:
			return 0, fmt.Errorf("jupyter %s: GET %s: %d", w, c.base+JupyterStaticPath, res.StatusCode)
		case n == 0:
			return 0, fmt.Errorf("jupyter %s: GET %s: empty", w, c.base+JupyterStaticPath)
		}
		sizes[i] = n
	}
	if sizes[0] != sizes[1] {
		return 0, fmt.Errorf("jupyter: GET %s: %d bytes through the proxy, %d directly", JupyterStaticPath, sizes[0], sizes[1])
	}
	return sizes[0], nil
}
