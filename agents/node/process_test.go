package node_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

// A separately started `cairn agent` process joins the embedded NATS
// server by its URL, registers, runs a kernel, serves its logs, and stops
// on SIGTERM without stopping the kernel.
func TestAgentProcess(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bin := buildCairn(t)

	stderr := &lockedBuffer{}
	ctx, cancel := context.WithTimeout(h.ctx, 3*waitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "agent",
		"--podman", h.uri, "--data-dir", h.dataDir(), "--listen", "127.0.0.1:0",
		"--heartbeat-interval", "500ms", "--stop-grace", "1s")
	// The bus and the id through the environment, as an operator may.
	cmd.Env = append(os.Environ(), "CAIRN_BUS="+h.nats.ClientURL(), "CAIRN_BUS_CREDENTIALS="+h.creds, "CAIRN_AGENT_ID="+h.agentID, "CAIRN_GPUS=mock:dgxa100")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("agent process output:\n%s", stderr.String())
		}
	})

	reg := h.register(0)
	if reg.AgentID != h.agentID || len(reg.Devices) != 8 || reg.Address == "" {
		t.Errorf("agent.register from the process = %+v", reg)
	}
	create := h.create("sh", "-c", "echo from-the-process; sleep 60")
	h.send(create)
	running := h.status(0, create.KernelID, domain.PhaseRunning)
	h.eventually("the kernel's logs over HTTP", func() bool {
		body, status := get(t, reg.Address+"/kernels/"+create.KernelID.String()+"/logs")
		return status == 200 && strings.Contains(body, "from-the-process\n")
	})

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("agent process exited with %v after SIGTERM, want status 0", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("agent process did not exit after SIGTERM")
	}
	c, err := h.rt.Inspect(h.ctx, running.ContainerID)
	if err != nil || c.State != runtime.StateRunning {
		t.Errorf("the kernel after the agent stopped: %+v, %v; want it running", c, err)
	}
}

// buildCairn builds the cairn binary with the build tags this test binary
// was built with (the Go build cache makes it quick after the first time).
func buildCairn(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the agent: %v", err)
	}
	out, err := exec.Command(goBin, "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go env GOMOD: %q, %v", out, err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	args := []string{"build", "-o", filepath.Join(t.TempDir(), "cairn")}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "-tags" {
				args = append(args, "-tags="+s.Value)
			}
		}
	}
	build := exec.Command(goBin, append(args, "./cmd/cairn")...)
	build.Dir = root
	if msg, err := build.CombinedOutput(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go build: %v\n%s", err, msg)
		}
		t.Fatal(err)
	}
	return args[2]
}
