package node

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

// terminalCommand is every terminal's process: a login bash where the
// image has one, else sh.
var terminalCommand = []string{"/bin/sh", "-c", "if [ -x /bin/bash ]; then exec /bin/bash -l; fi; exec /bin/sh"}

// terminalEnv is added to the kernel's environment in its terminals.
var terminalEnv = []string{"TERM=xterm-256color"}

// Terminal close reasons, sent to a client as its close reason.
const (
	reasonTakenOver   = "the terminal was attached by another client"
	reasonShellExited = "the shell exited"
	reasonEnded       = "the terminal was closed"
)

// terminalEndTimeout bounds the wait for terminals to end when their
// kernel is destroyed or the agent stops.
const terminalEndTimeout = 30 * time.Second

// terminalKey names a terminal: its kernel and the id its client chose.
type terminalKey struct{ kernel, id uuid.UUID }

// terminals are the agent's terminals, by kernel and id, and when each
// kernel's terminals were last used.
type terminals struct {
	mu    sync.Mutex
	byKey map[terminalKey]*terminal
	// closing holds the kernels being destroyed: they get no new terminal.
	closing  map[uuid.UUID]bool
	activity map[uuid.UUID]time.Time
}

func newTerminals() *terminals {
	return &terminals{byKey: map[terminalKey]*terminal{}, closing: map[uuid.UUID]bool{}, activity: map[uuid.UUID]time.Time{}}
}

// terminal is one shell with a pseudo-terminal in a kernel's container.
// Its pump (see pump) reads the output into the scrollback and on to the
// attached client; the terminal ends when the shell exits, when it is
// closed (kernel destroyed, detach timeout, agent stopping), and is then
// forgotten.
type terminal struct {
	key     terminalKey
	created time.Time
	set     *terminals
	log     *slog.Logger
	timeout time.Duration

	// ready is closed once the exec has started (tty set) or failed.
	ready chan struct{}
	tty   runtime.Terminal
	// done is closed once the terminal has ended and been forgotten.
	done chan struct{}

	mu           sync.Mutex
	scroll       tailKeeper
	client       *termClient
	lastActivity time.Time
	detachTimer  *time.Timer
	// closeReason is why the terminal was closed ("" until it is).
	closeReason string
	// ended is set, with exitCode, once the shell has ended: a client
	// that attaches after is told so at once.
	ended     bool
	exitCode  int
	closeOnce sync.Once
}

// TerminalInfo describes one terminal (GET /kernels/{kernel}/terminals).
type TerminalInfo struct {
	ID           uuid.UUID `json:"id"`
	Created      time.Time `json:"created"`
	Attached     bool      `json:"attached"`
	LastActivity time.Time `json:"last_activity"`
}

// Terminals lists the kernel's terminals, oldest first. A kernel the agent
// does not look after is KindNotFound.
func (a *Agent) Terminals(kernelID uuid.UUID) ([]TerminalInfo, error) {
	if a.lookup(kernelID) == nil {
		return nil, domain.Errorf("agent.terminals", domain.KindNotFound, "agent %s has no kernel %s", a.cfg.AgentID, kernelID)
	}
	var out []TerminalInfo
	for _, t := range a.terms.of(kernelID) {
		t.mu.Lock()
		out = append(out, TerminalInfo{ID: t.key.id, Created: t.created, Attached: t.client != nil, LastActivity: t.lastActivity})
		t.mu.Unlock()
	}
	slices.SortFunc(out, func(x, y TerminalInfo) int { return x.Created.Compare(y.Created) })
	return out, nil
}

// TerminalActivity is when a terminal of the kernel last had input or
// output; zero if it never had a terminal (or the agent forgot it, as it
// does when the kernel is removed). Idle rules use it to count terminal
// use as activity.
func (a *Agent) TerminalActivity(kernelID uuid.UUID) time.Time {
	a.terms.mu.Lock()
	defer a.terms.mu.Unlock()
	return a.terms.activity[kernelID]
}

// of returns the kernel's terminals.
func (s *terminals) of(kernelID uuid.UUID) []*terminal {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*terminal
	for k, t := range s.byKey {
		if k.kernel == kernelID {
			out = append(out, t)
		}
	}
	return out
}

func (s *terminals) all() []*terminal {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*terminal, 0, len(s.byKey))
	for _, t := range s.byKey {
		out = append(out, t)
	}
	return out
}

func (s *terminals) touch(kernelID uuid.UUID, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if at.After(s.activity[kernelID]) {
		s.activity[kernelID] = at
	}
}

func (s *terminals) remove(t *terminal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKey[t.key] == t {
		delete(s.byKey, t.key)
	}
}

// forget drops what the agent remembers of a removed kernel's terminals.
func (s *terminals) forget(kernelID uuid.UUID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.closing, kernelID)
	delete(s.activity, kernelID)
}

// openTerminal returns the terminal key names, starting it (a shell of
// cols x rows, 0 for the default) if there is none; created tells which.
// A kernel the agent does not run is KindNotFound (KindConflict while it is
// being destroyed), one that has TerminalsPerKernel terminals already
// KindConflict.
func (a *Agent) openTerminal(ctx context.Context, key terminalKey, cols, rows int) (t *terminal, created bool, err error) {
	const op = "agent.terminal"
	rt, ok := a.runtime()
	if !ok {
		return nil, false, domain.Errorf(op, domain.KindUnavailable, "agent %s is not running", a.cfg.AgentID)
	}
	k := a.lookup(key.kernel)
	if k == nil {
		return nil, false, domain.Errorf(op, domain.KindNotFound, "agent %s has no kernel %s", a.cfg.AgentID, key.kernel)
	}
	a.mu.Lock()
	running := k.running
	a.mu.Unlock()
	if !running || k.destroyRequested() {
		return nil, false, domain.Errorf(op, domain.KindConflict, "kernel %s is not running", key.kernel)
	}

	s := a.terms
	s.mu.Lock()
	if t := s.byKey[key]; t != nil {
		s.mu.Unlock()
		select {
		case <-t.ready:
		case <-ctx.Done():
			return nil, false, runtimeError(op, ctx.Err())
		}
		if t.tty == nil {
			return nil, false, domain.Errorf(op, domain.KindConflict, "terminal %s did not start", key.id)
		}
		return t, false, nil
	}
	if s.closing[key.kernel] {
		s.mu.Unlock()
		return nil, false, domain.Errorf(op, domain.KindConflict, "kernel %s is being destroyed", key.kernel)
	}
	n := 0
	for k := range s.byKey {
		if k.kernel == key.kernel {
			n++
		}
	}
	if n >= a.cfg.TerminalsPerKernel {
		s.mu.Unlock()
		return nil, false, domain.Errorf(op, domain.KindConflict,
			"kernel %s has %d terminals already, the most it may have; close one (exit its shell) first", key.kernel, n)
	}
	t = &terminal{key: key, created: time.Now().UTC(), set: s, timeout: a.cfg.TerminalDetachTimeout,
		log:   a.log.With("kernel_id", key.kernel, "terminal_id", key.id),
		ready: make(chan struct{}), done: make(chan struct{}), scroll: tailKeeper{max: a.cfg.TerminalScrollback}}
	t.lastActivity = t.created
	s.byKey[key] = t
	s.mu.Unlock()

	tty, err := rt.ExecTerminal(ctx, runtime.ContainerName(key.kernel.String()), runtime.TerminalSpec{
		Command: terminalCommand, Env: terminalEnv, Cols: cols, Rows: rows,
	})
	if err != nil {
		s.remove(t)
		close(t.ready)
		close(t.done)
		if errors.Is(err, runtime.ErrInvalid) {
			// The container stopped since the agent last looked.
			return nil, false, &domain.Error{Op: op, Kind: domain.KindConflict, Message: "kernel " + key.kernel.String() + " is not running", Err: err}
		}
		return nil, false, runtimeError(op, err)
	}
	t.tty = tty
	s.touch(key.kernel, t.created)
	t.mu.Lock()
	t.startDetachTimer()
	t.mu.Unlock()
	close(t.ready)
	go t.pump()
	t.log.Info("terminal started", "cols", cols, "rows", rows)
	return t, true, nil
}

// pump copies the shell's output into the scrollback and to the attached
// client until the shell has exited (or was ended), then tells the client
// its exit code and forgets the terminal.
func (t *terminal) pump() {
	buf := make([]byte, 32<<10)
	for {
		n, err := t.tty.Read(buf)
		if n > 0 {
			chunk := slices.Clone(buf[:n])
			now := time.Now().UTC()
			t.mu.Lock()
			_, _ = t.scroll.Write(chunk)
			t.lastActivity = now
			c := t.client
			t.mu.Unlock()
			t.set.touch(t.key.kernel, now)
			if c != nil {
				c.send(termFrame{data: chunk})
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && t.reason() == "" {
				t.log.Warn("terminal output failed", "error", err)
			}
			break
		}
	}
	// Podman records the exit a little after the output ends.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	code, err := t.tty.ExitCode(ctx)
	cancel()
	if err != nil {
		t.log.Warn("terminal exit code unknown", "error", err)
		code = -1
	}
	// Ends what the shell left holding the terminal.
	if err := t.tty.Close(); err != nil {
		t.log.Warn("terminal close", "error", err)
	}
	t.set.remove(t)
	t.mu.Lock()
	t.ended, t.exitCode = true, code
	c := t.client
	t.client = nil
	if t.detachTimer != nil {
		t.detachTimer.Stop()
	}
	reason := t.endReason()
	t.mu.Unlock()
	if c != nil {
		c.send(termFrame{control: exitMessage(code)})
		c.finish(reason)
	}
	t.log.Info("terminal ended", "exit_code", code, "reason", reason)
	close(t.done)
}

// close ends the terminal: its shell is hung up (see runtime.Terminal's
// Close), after which the pump sees the output end and finishes.
func (t *terminal) close(reason string) {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closeReason = reason
		t.mu.Unlock()
		t.log.Info("closing terminal", "reason", reason)
		if err := t.tty.Close(); err != nil {
			t.log.Warn("terminal close", "error", err)
		}
	})
}

// endReason is why the terminal ended, once it has. t.mu is held.
func (t *terminal) endReason() string {
	if t.closeReason != "" {
		return t.closeReason
	}
	return reasonShellExited
}

func (t *terminal) reason() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closeReason
}

// startDetachTimer ends the terminal after its detach timeout unless a
// client attaches first. t.mu is held.
func (t *terminal) startDetachTimer() {
	if t.detachTimer != nil {
		t.detachTimer.Stop()
	}
	var timer *time.Timer
	timer = time.AfterFunc(t.timeout, func() {
		t.mu.Lock()
		current := t.detachTimer == timer && t.client == nil
		t.mu.Unlock()
		if current {
			go t.close("no client attached for " + t.timeout.String())
		}
	})
	t.detachTimer = timer
}

// attach makes c the terminal's client: c is sent the attached message,
// then the scrollback, then the live output. A client attached before is
// closed (taken over).
func (t *terminal) attach(c *termClient, created bool) {
	c.send(termFrame{control: attachedMessage(t.key.id, created)})
	t.mu.Lock()
	if back := scrollback(t.scroll.kept()); len(back) > 0 {
		c.send(termFrame{data: slices.Clone(back)})
	}
	if t.ended {
		code, reason := t.exitCode, t.endReason()
		t.mu.Unlock()
		c.send(termFrame{control: exitMessage(code)})
		c.finish(reason)
		return
	}
	old := t.client
	t.client = c
	if t.detachTimer != nil {
		t.detachTimer.Stop()
		t.detachTimer = nil
	}
	t.mu.Unlock()
	if old != nil {
		old.finishWith(statusTakenOver, reasonTakenOver)
	}
}

// scrollbackCut is how far into kept output scrollback looks for a line
// start.
const scrollbackCut = 4 << 10

// scrollback is what a client attaching is sent of the kept output: all
// of it while nothing was dropped, else from the first line start, so
// that it does not begin inside an escape sequence or a character.
func scrollback(kept []byte, start int64) []byte {
	if start == 0 {
		return kept
	}
	if i := bytes.IndexByte(kept[:min(len(kept), scrollbackCut)], '\n'); i >= 0 {
		return kept[i+1:]
	}
	return kept
}

// detach forgets c if it is still the client, and starts the detach
// timeout.
func (t *terminal) detach(c *termClient) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.client != c {
		return
	}
	t.client = nil
	if !t.ended {
		t.startDetachTimer()
	}
}

// input types p into the shell if c is the attached client.
func (t *terminal) input(c *termClient, p []byte) error {
	now := time.Now().UTC()
	t.mu.Lock()
	current := t.client == c
	if current {
		t.lastActivity = now
	}
	t.mu.Unlock()
	if !current {
		return nil
	}
	t.set.touch(t.key.kernel, now)
	_, err := t.tty.Write(p)
	return err
}

// closeTerminals ends the kernel's terminals and waits for them (at most
// until ctx ends); the kernel gets no new one. Its container is about to
// be removed.
func (a *Agent) closeTerminals(ctx context.Context, kernelID uuid.UUID, reason string) {
	a.terms.mu.Lock()
	a.terms.closing[kernelID] = true
	a.terms.mu.Unlock()
	a.endTerminals(ctx, a.terms.of(kernelID), reason)
}

// endTerminals closes ts and waits for them to end, at most until ctx
// ends.
func (a *Agent) endTerminals(ctx context.Context, ts []*terminal, reason string) {
	var wg sync.WaitGroup
	for _, t := range ts {
		wg.Go(func() {
			select {
			case <-t.ready:
			case <-ctx.Done():
				return
			}
			if t.tty == nil {
				return
			}
			t.close(reason)
			select {
			case <-t.done:
			case <-ctx.Done():
			}
		})
	}
	wg.Wait()
}
