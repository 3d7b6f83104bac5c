package podman

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	dockercontainer "github.com/docker/docker/api/types/container"

	"github.com/containers/podman/v5/pkg/api/handlers"
	"github.com/containers/podman/v5/pkg/bindings"
	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/cairnhq/cairn/agents/runtime"
)

// EnvTerminalMark is set, to a value unique to the terminal, in the
// environment of every terminal's process: Close finds by it the processes
// to end (the shell and whatever it started that kept its environment).
const EnvTerminalMark = "CAIRN_TERMINAL_MARK"

// closeScript ends the terminal whose processes carry the mark given as
// $1, as a terminal hanging up would: every marked process gets SIGHUP,
// and those still holding the terminal (a /dev/pts on stdin, stdout or
// stderr) after about two seconds get SIGKILL; what detached itself from
// the terminal (nohup, redirected output) survives, as after a logout.
// Podman has no call that ends an exec session and leaves it running when
// its attachment closes, so the runtime does it from inside the container
// with what busybox and every shell image have (/proc, tr, grep,
// readlink, kill).
const closeScript = `m="$1"
mine() { for p in /proc/[0-9]*; do tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qxF "$m" && echo "${p#/proc/}"; done; }
holding() { for p in $(mine); do for f in 0 1 2; do case "$(readlink "/proc/$p/fd/$f" 2>/dev/null)" in /dev/pts/*) echo "$p"; break;; esac; done; done; }
pids=$(mine); [ -z "$pids" ] && exit 0
kill -HUP $pids 2>/dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do pids=$(holding); [ -z "$pids" ] && exit 0; sleep 0.2 2>/dev/null || sleep 1; done
kill -KILL $pids 2>/dev/null
exit 0`

// ExecTerminal starts spec.Command in the running container id with a
// pseudo-terminal, as the container's user in its working directory, and
// returns it attached.
//
// The exec session is created with containers.ExecCreate and started by
// POST /exec/{id}/start asking for a protocol upgrade, so the service
// answers 101 and net/http hands the raw connection over as the answer's
// body. The bindings' ExecStartAndAttach is not used: it swaps the
// shared connection's transport for one of its own (a data race with
// every other call), and when the agent's own stdin is a terminal (`cairn
// dev` in a shell) it puts that terminal in raw mode and sizes the exec
// after it.
func (r *Runtime) ExecTerminal(ctx context.Context, id string, spec runtime.TerminalSpec) (runtime.Terminal, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("podman: exec terminal in %s: %w", id, err)
	}
	spec = spec.WithDefaults()
	c, err := r.Inspect(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.State != runtime.StateRunning {
		return nil, fmt.Errorf("podman: exec terminal in %s: %w: the container is %s, not running", id, runtime.ErrInvalid, c.State)
	}
	mark := rand.Text()
	env := append(slices.Clone(spec.Env), EnvTerminalMark+"="+mark)
	session, err := containers.ExecCreate(r.call(ctx), c.ID, &handlers.ExecCreateConfig{ExecOptions: dockercontainer.ExecOptions{
		Tty: true, AttachStdin: true, AttachStdout: true, AttachStderr: true,
		Env: env, Cmd: spec.Command,
	}})
	if err != nil {
		return nil, translate(ctx, "exec create in "+id, err)
	}
	stream, cancel, err := r.startAttached(ctx, session, handlers.ExecStartConfig{Tty: true, Height: uint16(spec.Rows), Width: uint16(spec.Cols)})
	if err != nil {
		return nil, err
	}
	return &terminal{rt: r, container: c.ID, session: session, mark: mark, stream: stream, cancel: cancel}, nil
}

// startAttached starts an exec session and returns its attached stream
// (raw with a TTY, multiplexed without), which outlives ctx: cancel ends
// it.
func (r *Runtime) startAttached(ctx context.Context, session string, start handlers.ExecStartConfig) (io.ReadWriteCloser, context.CancelFunc, error) {
	conn, err := bindings.GetClient(r.call(ctx))
	if err != nil {
		return nil, nil, fmt.Errorf("podman: exec start %s: %w", session, err)
	}
	body, err := json.Marshal(start)
	if err != nil {
		return nil, nil, fmt.Errorf("podman: exec start %s: %w", session, err)
	}
	attachCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	resp, err := conn.DoRequest(r.call(attachCtx), bytes.NewReader(body), http.MethodPost, "/exec/%s/start", nil,
		http.Header{"Connection": {"Upgrade"}, "Upgrade": {"tcp"}, "Content-Type": {"application/json"}}, session)
	if err != nil {
		cancel()
		return nil, nil, translate(ctx, "exec start "+session, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer cancel()
		defer resp.Body.Close()
		if err := resp.Process(nil); err != nil {
			return nil, nil, translate(ctx, "exec start "+session, err)
		}
		return nil, nil, fmt.Errorf("podman: exec start %s: the service answered %s, not a protocol upgrade", session, resp.Status)
	}
	stream, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		cancel()
		resp.Body.Close()
		return nil, nil, fmt.Errorf("podman: exec start %s: the upgraded connection is not writable", session)
	}
	return stream, cancel, nil
}

// terminal is one attached exec session.
type terminal struct {
	rt        *Runtime
	container string
	session   string
	mark      string
	stream    io.ReadWriteCloser
	cancel    context.CancelFunc
	once      sync.Once
	closeErr  error
}

var _ runtime.Terminal = (*terminal)(nil)

func (t *terminal) Read(p []byte) (int, error)  { return t.stream.Read(p) }
func (t *terminal) Write(p []byte) (int, error) { return t.stream.Write(p) }

func (t *terminal) Resize(ctx context.Context, cols, rows int) error {
	if err := runtime.ValidateTerminalSize(cols, rows); err != nil {
		return fmt.Errorf("podman: resize exec %s: %w", t.session, err)
	}
	opts := new(containers.ResizeExecTTYOptions).WithWidth(cols).WithHeight(rows)
	return translate(ctx, "resize exec "+t.session, containers.ResizeExecTTY(t.rt.call(ctx), t.session, opts))
}

// exitPoll is how often ExitCode looks whether Podman has recorded the
// exit (it learns of it from conmon a little after the attachment ends).
const exitPoll = 100 * time.Millisecond

func (t *terminal) ExitCode(ctx context.Context) (int, error) {
	tick := time.NewTicker(exitPoll)
	defer tick.Stop()
	for {
		data, err := containers.ExecInspect(t.rt.call(ctx), t.session, nil)
		if err != nil {
			return 0, translate(ctx, "inspect exec "+t.session, err)
		}
		if !data.Running {
			return data.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("podman: inspect exec %s: still running: %w", t.session, ctx.Err())
		case <-tick.C:
		}
	}
}

// closeTimeout bounds how long Close works at ending the processes.
const closeTimeout = 30 * time.Second

// Close ends the terminal's processes (see closeScript) and waits for
// that, then closes the attachment. A container that is gone or stopped
// has no processes left to end.
func (t *terminal) Close() error {
	t.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		err := t.rt.endProcesses(ctx, t.container, t.mark)
		if errors.Is(err, runtime.ErrNotFound) || errors.Is(err, errNotRunning) {
			err = nil
		}
		if cerr := t.stream.Close(); err == nil && cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			err = fmt.Errorf("podman: close exec %s: %w", t.session, cerr)
		}
		t.cancel()
		t.closeErr = err
	})
	return t.closeErr
}

// errNotRunning: the container does not run, so neither do its execs.
var errNotRunning = errors.New("container not running")

// endProcesses runs closeScript in the container and waits for it to end.
func (r *Runtime) endProcesses(ctx context.Context, container, mark string) error {
	c, err := r.Inspect(ctx, container)
	if err != nil {
		return err
	}
	if c.State != runtime.StateRunning {
		return errNotRunning
	}
	session, err := containers.ExecCreate(r.call(ctx), c.ID, &handlers.ExecCreateConfig{ExecOptions: dockercontainer.ExecOptions{
		AttachStdout: true, AttachStderr: true, Cmd: []string{"/bin/sh", "-c", closeScript, "sh", EnvTerminalMark + "=" + mark},
	}})
	if err != nil {
		return translate(ctx, "exec create in "+container, err)
	}
	stream, cancel, err := r.startAttached(ctx, session, handlers.ExecStartConfig{})
	if err != nil {
		return err
	}
	defer cancel()
	defer stream.Close()
	// The attachment ends when the script has exited.
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, stream)
		done <- err
	}()
	select {
	case <-ctx.Done():
		return fmt.Errorf("podman: end terminal processes in %s: %w", container, ctx.Err())
	case err := <-done:
		if err != nil && !errors.Is(err, net.ErrClosed) {
			return fmt.Errorf("podman: end terminal processes in %s: %w", container, err)
		}
	}
	return nil
}
