// Package logging builds the process's structured logger (log/slog).
package logging

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Config selects the log level and format.
type Config struct {
	Level  string // debug | info | warn | error
	Format string // text | json
}

// Validate reports a bad level or format.
func (c Config) Validate() error {
	if _, err := parseLevel(c.Level); err != nil {
		return err
	}
	switch c.Format {
	case "text", "json":
		return nil
	}
	return fmt.Errorf("log format %q: want text or json", c.Format)
}

// New returns a logger writing to w.
func New(w io.Writer, c Config) (*slog.Logger, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	lvl, _ := parseLevel(c.Level)
	opts := &slog.HandlerOptions{Level: lvl}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}

func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("log level %q: want debug, info, warn or error", s)
}
