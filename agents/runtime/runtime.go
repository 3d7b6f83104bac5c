package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Runtime runs kernels as containers. It is the port the agent's
// reconciler consumes; adapters (podman) implement it. Every method is safe
// for concurrent use, and every id argument may be a container's full id,
// a unique prefix of it, or its name.
type Runtime interface {
	// Ensure returns the container of spec.KernelID, creating it (not
	// starting it) when there is none; created tells which. It never
	// creates a second container for a kernel id, even when called
	// concurrently, and never compares an existing container with spec.
	// An image that is not present locally is ErrNotFound (call
	// EnsureImage first); a malformed spec is ErrInvalid.
	Ensure(ctx context.Context, spec ContainerSpec) (c Container, created bool, err error)

	// Start starts a created container. A container that is running, or
	// that already ran and exited, is left as it is: a kernel runs at most
	// once, however often Start is resent.
	Start(ctx context.Context, id string) error

	// Inspect reports a container's current state.
	Inspect(ctx context.Context, id string) (Container, error)

	// List returns every container (in any state) owned by agentID, by its
	// cairn.agent label: what an agent adopts after a restart. It never
	// stops or removes anything.
	List(ctx context.Context, agentID string) ([]Container, error)

	// Wait blocks until the container has exited and returns its exit code;
	// it returns at once for a container that already exited, and waits
	// for a created one to be started and exit. It returns ctx's error when
	// ctx ends first.
	Wait(ctx context.Context, id string) (exitCode int, err error)

	// Logs returns the container's stdout and stderr, interleaved in the
	// order the runtime recorded them (each stream in its own order; lines
	// written to both at nearly the same time may swap), while it runs and
	// after it exits (until Remove). The result is capped as opts says.
	Logs(ctx context.Context, id string, opts LogOptions) ([]byte, error)

	// StreamLogs writes to w the part of the container's log r selects
	// (see LogRange for what the log is), while it runs and after it
	// exits (until Remove). With r.Follow it writes the output as the
	// container writes it, waiting for a created container to start, and
	// returns once the container has exited and its whole log is written.
	StreamLogs(ctx context.Context, id string, r LogRange, w io.Writer) (LogRead, error)

	// Remove stops the container (SIGTERM, then SIGKILL after its stop
	// grace period) and removes it with its logs. A container that does not
	// exist is not an error.
	Remove(ctx context.Context, id string) error

	// ExecTerminal starts spec.Command in the running container id with a
	// pseudo-terminal (stdin, stdout and stderr on it), as the container's
	// user in its working directory, and returns it attached. A container
	// that does not run is ErrInvalid. The process lives until it exits or
	// the Terminal is closed, whoever holds the Terminal; closing the
	// attachment any other way is not enough to end it.
	ExecTerminal(ctx context.Context, id string, spec TerminalSpec) (Terminal, error)

	// ImageExists reports whether ref is present locally.
	ImageExists(ctx context.Context, ref string) (bool, error)

	// EnsureImage makes ref present locally, pulling it when it is not.
	// An image that is neither local nor pullable is ErrNotFound. While
	// it pulls, progress (if not nil) is called, from the calling
	// goroutine, with each change the runtime reports: as often as the
	// runtime says something, so a caller that forwards it throttles.
	EnsureImage(ctx context.Context, ref string, progress func(PullProgress)) error
}

// PullProgress is how far an image pull is: layers done of the layers
// announced so far, bytes received of the sizes announced so far (a
// total grows as layers are announced; zero until the first is).
type PullProgress struct {
	LayersDone, LayersTotal int
	BytesDone, BytesTotal   int64
}

// DefaultLogMaxBytes caps Logs when LogOptions.MaxBytes is zero.
const DefaultLogMaxBytes = 1 << 20

// LogOptions bound what Logs returns.
type LogOptions struct {
	// Tail limits the result to the last Tail lines; 0: all lines.
	Tail int
	// MaxBytes keeps only the last MaxBytes bytes (the most recent output);
	// 0: DefaultLogMaxBytes.
	MaxBytes int
}

// WithDefaults returns o with its zero fields set to the defaults.
func (o LogOptions) WithDefaults() LogOptions {
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultLogMaxBytes
	}
	return o
}

// Validate reports a negative tail or byte cap; each matches ErrInvalid.
func (o LogOptions) Validate() error {
	var errs []error
	if o.Tail < 0 {
		errs = append(errs, fmt.Errorf("%w: log tail %d is negative", ErrInvalid, o.Tail))
	}
	if o.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: log max bytes %d is negative", ErrInvalid, o.MaxBytes))
	}
	return errors.Join(errs...)
}
