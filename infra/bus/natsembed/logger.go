package natsembed

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// serverLogger adapts slog to NATS's server.Logger. NATS's notices (its
// start-up chatter) go to debug; a fatal error is logged as an error, never
// exits the process, and is kept for Start to report.
type serverLogger struct {
	log *slog.Logger

	mu       sync.Mutex
	lastFail string
}

func (l *serverLogger) Noticef(format string, v ...any) { l.logf(slog.LevelDebug, format, v...) }
func (l *serverLogger) Warnf(format string, v ...any)   { l.logf(slog.LevelWarn, format, v...) }
func (l *serverLogger) Errorf(format string, v ...any)  { l.logf(slog.LevelError, format, v...) }
func (l *serverLogger) Debugf(format string, v ...any)  { l.logf(slog.LevelDebug, format, v...) }
func (l *serverLogger) Tracef(format string, v ...any)  { l.logf(slog.LevelDebug, format, v...) }

func (l *serverLogger) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	l.mu.Lock()
	l.lastFail = msg
	l.mu.Unlock()
	l.log.Error(msg, "fatal", true)
}

// fatal returns the last fatal message, "" when there was none.
func (l *serverLogger) fatal() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastFail
}

func (l *serverLogger) logf(level slog.Level, format string, v ...any) {
	ctx := context.Background()
	if !l.log.Enabled(ctx, level) {
		return
	}
	l.log.Log(ctx, level, fmt.Sprintf(format, v...))
}
