package podman

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnhq/cairn/agents/runtime"
)

// screen collects a terminal's output as it comes.
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{}
	err  error
}

func watchScreen(t runtime.Terminal) *screen {
	s := &screen{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		var b [4096]byte
		for {
			n, err := t.Read(b[:])
			s.mu.Lock()
			s.buf.Write(b[:n])
			if err != nil {
				s.err = err
			}
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (h *harness) screenShows(s *screen, want string) {
	h.t.Helper()
	if !eventually(h.ctx, func() bool { return strings.Contains(s.String(), want) }) {
		h.t.Fatalf("the terminal never showed %q; it shows %q", want, s.String())
	}
}

// A terminal runs a shell with a pseudo-terminal: it echoes, computes,
// takes its size from the spec and from Resize, and reports the exit code.
func TestExecTerminal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.run(h.spec("sleep", "300"))
	term, err := h.rt.ExecTerminal(h.ctx, c.ID, runtime.TerminalSpec{Command: []string{"/bin/sh"}, Env: []string{"TERM=xterm-256color"}, Cols: 100, Rows: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	s := watchScreen(term)
	if _, err := io.WriteString(term, "echo $((6*7)) $TERM\r"); err != nil {
		t.Fatal(err)
	}
	h.screenShows(s, "42 xterm-256color")
	if _, err := io.WriteString(term, "stty size\r"); err != nil {
		t.Fatal(err)
	}
	h.screenShows(s, "30 100")
	if err := term.Resize(h.ctx, 120, 40); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(term, "stty size\r"); err != nil {
		t.Fatal(err)
	}
	h.screenShows(s, "40 120")
	soon, cancel := context.WithTimeout(h.ctx, 300*time.Millisecond)
	if _, err := term.ExitCode(soon); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ExitCode of a running shell: %v, want it to wait until ctx ends", err)
	}
	cancel()
	if _, err := io.WriteString(term, "exit 7\r"); err != nil {
		t.Fatal(err)
	}
	<-s.done
	if !errors.Is(s.err, io.EOF) {
		t.Errorf("read after exit: %v, want EOF", s.err)
	}
	if code, err := term.ExitCode(h.ctx); err != nil || code != 7 {
		t.Errorf("exit code = %d, %v; want 7", code, err)
	}
}

// Close ends the shell and what it started that holds the terminal, even
// when they ignore the hang-up; a process detached from the terminal
// survives (as after a logout), and so do the container's others.
func TestExecTerminalClose(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.run(h.spec("sleep", "300"))
	term, err := h.rt.ExecTerminal(h.ctx, c.ID, runtime.TerminalSpec{Command: []string{"/bin/sh"}})
	if err != nil {
		t.Fatal(err)
	}
	s := watchScreen(term)
	if _, err := io.WriteString(term, "trap '' HUP; sleep 1001 & (exec sleep 1002 </dev/null >/dev/null 2>&1) & echo started\r"); err != nil {
		t.Fatal(err)
	}
	h.screenShows(s, "started")
	if ps := h.output(c.ID, "sh", "-c", "ps"); !strings.Contains(ps, "sleep 1001") || !strings.Contains(ps, "sleep 1002") {
		t.Fatalf("ps before Close:\n%s", ps)
	}
	if err := term.Close(); err != nil {
		t.Fatal(err)
	}
	<-s.done
	if code, err := term.ExitCode(h.ctx); err != nil || code == 0 {
		t.Errorf("exit code after Close = %d, %v; want a signal's", code, err)
	}
	ps := h.output(c.ID, "sh", "-c", "ps")
	if strings.Contains(ps, "sleep 1001") || !strings.Contains(ps, "sleep 1002") || !strings.Contains(ps, "sleep 300") {
		t.Errorf("ps after Close (want sleep 300 and 1002, not sleep 1001):\n%s", ps)
	}
	if err := term.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A terminal in a container that does not run is ErrInvalid; in one that
// does not exist, ErrNotFound; an empty command, ErrInvalid.
func TestExecTerminalRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c, _, err := h.rt.Ensure(h.ctx, h.spec("sleep", "300"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.rt.ExecTerminal(h.ctx, c.ID, runtime.TerminalSpec{Command: []string{"/bin/sh"}})
	wantIs(t, err, runtime.ErrInvalid)
	_, err = h.rt.ExecTerminal(h.ctx, "cairn-no-such-"+randomID(t), runtime.TerminalSpec{Command: []string{"/bin/sh"}})
	wantIs(t, err, runtime.ErrNotFound)
	_, err = h.rt.ExecTerminal(h.ctx, c.ID, runtime.TerminalSpec{})
	wantIs(t, err, runtime.ErrInvalid)
}

// output runs command in a terminal of the container and returns all it
// printed.
func (h *harness) output(container string, command ...string) string {
	h.t.Helper()
	term, err := h.rt.ExecTerminal(h.ctx, container, runtime.TerminalSpec{Command: command, Cols: 200})
	if err != nil {
		h.t.Fatal(err)
	}
	defer term.Close()
	out, err := io.ReadAll(term)
	if err != nil {
		h.t.Fatal(err)
	}
	return string(out)
}
