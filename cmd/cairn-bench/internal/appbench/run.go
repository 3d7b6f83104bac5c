package appbench

import (
	"context"
	"time"

	"github.com/cairnhq/cairn/infra/apptest"
)

// Result is everything Run measured.
type Result struct {
	Config    Config
	HTTP      []HTTPResult
	WebSocket WebSocketResult
	Jupyter   JupyterResult
	// Load is the load average before and after (1, 5, 15 min).
	LoadBefore, LoadAfter string
	Elapsed               time.Duration
}

// Run measures the app proxy against the app reached directly (see the
// package doc); s serves the API and the proxy, app runs in a session.
// jupyterSkip, when not empty, says why Jupyter is not measured.
func Run(ctx context.Context, s *Server, app *App, cfg Config, jupyterSkip string) (Result, error) {
	res := Result{Config: cfg, LoadBefore: LoadAverage()}
	start := time.Now()
	for _, c := range []struct {
		path string
		size int64
	}{{apptest.SmallPath, int64(len(apptest.SmallBody))}, {apptest.BigPath, apptest.BigSize}} {
		r, err := measureHTTP(ctx, app, cfg, c.path, c.size)
		if err != nil {
			return res, err
		}
		res.HTTP = append(res.HTTP, r)
	}
	ws, err := measureWebSocket(ctx, app, cfg)
	if err != nil {
		return res, err
	}
	res.WebSocket = ws
	res.Jupyter = JupyterResult{Image: cfg.JupyterImage, Skipped: jupyterSkip}
	if !cfg.Jupyter && jupyterSkip == "" {
		res.Jupyter.Skipped = "not measured (--jupyter=false)"
	}
	if res.Jupyter.Skipped == "" {
		if res.Jupyter, err = measureJupyter(ctx, s, cfg); err != nil {
			// The HTTP and WebSocket figures stand: the row says what failed.
			res.Jupyter.Failed = err.Error()
			cfg.progress("Jupyter not measured: %v", err)
		}
	}
	res.Elapsed = time.Since(start)
	res.LoadAfter = LoadAverage()
	return res, nil
}
