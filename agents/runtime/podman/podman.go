package podman

import (
	"context"
	"fmt"
	"net/url"

	"github.com/containers/podman/v5/pkg/bindings"

	"github.com/cairnhq/cairn/agents/runtime"
)

// DefaultURI is the rootful Podman service socket.
const DefaultURI = "unix:///run/podman/podman.sock"

// Runtime runs kernels as Podman containers. It is safe for concurrent use.
type Runtime struct {
	// conn is the context the bindings returned from NewConnection: it
	// carries the client, and is only ever used for its values (see call).
	conn  context.Context
	uri   string
	locks keyLock
}

var _ runtime.Runtime = (*Runtime)(nil)

// Connect connects to the Podman service at uri (unix:///path, tcp://host:port
// or ssh://...; empty means DefaultURI) and checks that it answers.
// A service that cannot be reached is runtime.ErrUnavailable.
func Connect(ctx context.Context, uri string) (*Runtime, error) {
	if uri == "" {
		uri = DefaultURI
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("podman: connect: %w: uri %q: %w", runtime.ErrInvalid, uri, err)
	}
	switch u.Scheme {
	case "unix", "tcp", "ssh":
	default:
		return nil, fmt.Errorf("podman: connect: %w: uri %q: scheme must be unix, tcp or ssh", runtime.ErrInvalid, uri)
	}
	conn, err := bindings.NewConnection(ctx, uri)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("podman: connect %s: %w", uri, ctx.Err())
		}
		return nil, fmt.Errorf("podman: connect %s: %w: %w", uri, runtime.ErrUnavailable, err)
	}
	return &Runtime{conn: conn, uri: uri}, nil
}

// URI is the service address the runtime talks to.
func (r *Runtime) URI() string { return r.uri }

// call returns a context for one binding call: ctx's deadline and
// cancellation, with the connection the bindings look up by value.
func (r *Runtime) call(ctx context.Context) context.Context {
	return callContext{Context: ctx, conn: r.conn}
}

// callContext is a context whose values come from the connection first.
// The bindings keep their client in a context value under an unexported
// key, so this is the only way to combine a long-lived connection with a
// per-call context.
type callContext struct {
	context.Context
	conn context.Context
}

func (c callContext) Value(key any) any {
	if v := c.conn.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}
