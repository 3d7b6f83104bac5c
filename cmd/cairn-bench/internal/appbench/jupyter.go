package appbench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"time"
)

// JupyterApp is the python image's notebook app (its service port).
const JupyterApp = "jupyter"

// JupyterResult is the time from POST /v1/sessions of the python image to
// the notebook's first 200 through the proxy, or why it was not measured.
type JupyterResult struct {
	Image   string
	Elapsed time.Duration
	// Skipped says why nothing was measured (the image is absent, or
	// --jupyter=false).
	Skipped string
	// Failed says what went wrong when the image was there but the
	// notebook could not be reached.
	Failed string
}

// measureJupyter requests a session of cfg.JupyterImage and times it
// until GET <app>/api/status answers 200 through the proxy; the session
// is terminated afterwards (not timed). Jupyter's token is Cairn's
// business: the agent sends it, the benchmark never sees it.
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
	if _, err := s.awaitSession(ctx, created.ID, created.Position, cfg.Timeout, "RUNNING"); err != nil {
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
	status := s.ProxyURL + "/v1/sessions/" + created.ID + "/apps/" + JupyterApp + "/api/status"
	if err := awaitOK(ctx, browser, status, cfg.Timeout); err != nil {
		return res, fmt.Errorf("jupyter: %w", err)
	}
	res.Elapsed = time.Since(start)
	cfg.progress("Jupyter usable %s after POST /v1/sessions", res.Elapsed.Round(time.Millisecond))
	return res, nil
}
