package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Timeouts of the harness: generous, the machine is shared.
const (
	startTimeout = 60 * time.Second
	stopTimeout  = 45 * time.Second
)

// proc is a cairn process: its stdout kept line by line (to wait for a
// line), its stderr (the logs) in a file shown when the test fails.
type proc struct {
	t    testing.TB
	name string
	cmd  *exec.Cmd
	logs string

	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed and replaced on every new line and at exit

	exited  chan struct{}
	exitErr error
}

// startProc runs cairn with args. The process is stopped (SIGTERM) when
// the test ends if it still runs, and must then exit with status 0: a
// clean shutdown is part of every test.
func startProc(t testing.TB, name string, args ...string) *proc {
	t.Helper()
	return startProcBin(t, cairnBin, name, args...)
}

// startProcBin is startProc of another build of cairn, bin.
func startProcBin(t testing.TB, bin, name string, args ...string) *proc {
	t.Helper()
	logs := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(logs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "CAIRN_LOG_FORMAT=text")
	cmd.Stderr = f
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, name: name, cmd: cmd, logs: logs, changed: make(chan struct{}), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Logf("%s started (pid %d): cairn %s", name, cmd.Process.Pid, strings.Join(args, " "))
	go func() {
		p.read(stdout)
		p.exitErr = cmd.Wait()
		f.Close()
		close(p.exited)
		p.notify()
	}()
	t.Cleanup(func() {
		if t.Failed() {
			p.dump()
		}
	})
	t.Cleanup(func() {
		if p.running() {
			if err := p.stop(syscall.SIGTERM); err != nil {
				t.Errorf("%s: clean shutdown: %v", name, err)
			}
		}
	})
	return p
}

func (p *proc) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		p.mu.Lock()
		p.lines = append(p.lines, sc.Text())
		p.mu.Unlock()
		p.notify()
	}
}

func (p *proc) notify() {
	p.mu.Lock()
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

func (p *proc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// waitLine waits for a stdout line matching re and returns its submatches.
func (p *proc) waitLine(re *regexp.Regexp) []string {
	p.t.Helper()
	deadline := time.After(startTimeout)
	for seen := 0; ; {
		p.mu.Lock()
		lines, changed := p.lines, p.changed
		p.mu.Unlock()
		for ; seen < len(lines); seen++ {
			if m := re.FindStringSubmatch(lines[seen]); m != nil {
				return m
			}
		}
		select {
		case <-changed:
		case <-p.exited:
			p.mu.Lock()
			more := len(p.lines) > seen
			p.mu.Unlock()
			if !more {
				p.t.Fatalf("%s exited (%v) before printing a line matching %q", p.name, p.exitErr, re)
			}
		case <-deadline:
			p.t.Fatalf("%s printed no line matching %q within %s", p.name, re, startTimeout)
		}
	}
}

// stop sends sig and waits for the process to exit with status 0 within
// stopTimeout; it is killed otherwise.
func (p *proc) stop(sig syscall.Signal) error {
	start := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("still running %s after %s; killed", sig, stopTimeout)
	}
	p.t.Logf("%s stopped by %s in %s", p.name, sig, time.Since(start).Round(time.Millisecond))
	if p.exitErr != nil {
		return fmt.Errorf("exit after %s: %v", sig, p.exitErr)
	}
	return nil
}

// kill9 kills the process without warning, as a crash would.
func (p *proc) kill9() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatalf("kill -9 %s: %v", p.name, err)
	}
	<-p.exited
	p.t.Logf("%s killed with SIGKILL", p.name)
}

// dump shows the process's stdout and the end of its logs.
func (p *proc) dump() {
	p.mu.Lock()
	out := strings.Join(p.lines, "\n")
	p.mu.Unlock()
	logs, _ := os.ReadFile(p.logs)
	const keep = 40000
	if len(logs) > keep {
		logs = append([]byte("...\n"), logs[len(logs)-keep:]...)
	}
	p.t.Logf("%s stdout:\n%s\n%s logs:\n%s", p.name, out, p.name, logs)
}

// runCairn runs one cairn command to its end and fails the test if it
// fails.
func runCairn(t testing.TB, args ...string) {
	t.Helper()
	out, err := exec.Command(cairnBin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
