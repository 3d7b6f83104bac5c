package appbench

import (
	"errors"
	"fmt"
	"time"
)

// Targets (issue #15).
const (
	// TargetRatio is the least proxy/direct requests/s.
	TargetRatio = 0.7
	// TargetAddedP99 is the most the proxy may add to a WebSocket round
	// trip's p99.
	TargetAddedP99 = 2 * time.Millisecond
)

// Config is what Run measures.
type Config struct {
	// Clients is the number of concurrent HTTP clients.
	Clients int
	// Duration is the length of each measured HTTP round.
	Duration time.Duration
	// Rounds is the number of measured rounds per way in (proxy, direct).
	Rounds int
	// Warmup is an unmeasured HTTP round per way in before the measured ones.
	Warmup time.Duration
	// Messages is the number of WebSocket round trips per round.
	Messages int
	// Jupyter measures POST /v1/sessions -> a usable Jupyter.
	Jupyter bool
	// JupyterImage is the image Jupyter runs in.
	JupyterImage string
	// Timeout bounds each wait: a session to run, an app to answer,
	// Jupyter to start.
	Timeout time.Duration
	// Progress, if set, is told what is being measured.
	Progress func(format string, args ...any)
}

// DefaultConfig is what `cairn-bench apps` measures by default.
func DefaultConfig() Config {
	return Config{Clients: 16, Duration: 5 * time.Second, Rounds: 3, Warmup: 2 * time.Second, Messages: 2000,
		Jupyter: true, JupyterImage: "localhost/cairn/python:latest", Timeout: 3 * time.Minute}
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if c.Clients < 1 {
		errs = append(errs, fmt.Errorf("--clients %d: must be at least 1", c.Clients))
	}
	if c.Duration <= 0 {
		errs = append(errs, fmt.Errorf("--duration %s: must be positive", c.Duration))
	}
	if c.Rounds < 1 {
		errs = append(errs, fmt.Errorf("--rounds %d: must be at least 1", c.Rounds))
	}
	if c.Warmup < 0 {
		errs = append(errs, fmt.Errorf("--warmup %s: must not be negative", c.Warmup))
	}
	if c.Messages < 1 {
		errs = append(errs, fmt.Errorf("--messages %d: must be at least 1", c.Messages))
	}
	if c.Jupyter && c.JupyterImage == "" {
		errs = append(errs, errors.New("--jupyter-image: empty"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: must be positive", c.Timeout))
	}
	return errors.Join(errs...)
}

func (c Config) progress(format string, args ...any) {
	if c.Progress != nil {
		c.Progress(format, args...)
	}
}
