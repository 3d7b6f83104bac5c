package bus

import (
	"errors"
	"log/slog"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/nats-io/nats.go"
)

// newWatermillLogger adapts slog to watermill's logger. Watermill logs
// lifecycle messages at info ("Subscriber closed"): they go to debug, with
// trace below debug.
func newWatermillLogger(log *slog.Logger) watermill.LoggerAdapter {
	return quietClosed{watermill.NewSlogLoggerWithLevelMapping(log, map[slog.Level]slog.Level{
		slog.LevelInfo: slog.LevelDebug,
	})}
}

// quietClosed logs at debug, not as an error, what watermill reports when
// its connection is already closed, and the Router's line about a handler
// error that the Bus logged already (reported). Handle drains a
// subscription's connection before it cancels watermill's subscription (so
// that no message is handed out during shutdown), and watermill's
// unsubscribe then always finds the connection closed.
type quietClosed struct{ watermill.LoggerAdapter }

func (l quietClosed) Error(msg string, err error, fields watermill.LogFields) {
	if errors.Is(err, nats.ErrConnectionClosed) || errors.As(err, new(reported)) {
		l.Debug(msg, fields.Add(watermill.LogFields{"error": err}))
		return
	}
	l.LoggerAdapter.Error(msg, err, fields)
}

func (l quietClosed) With(fields watermill.LogFields) watermill.LoggerAdapter {
	return quietClosed{l.LoggerAdapter.With(fields)}
}
