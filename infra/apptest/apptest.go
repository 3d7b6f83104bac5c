// Package apptest builds and describes the web app (package echoapp: a
// small answer, a 1 MiB answer and a WebSocket echo) that the app proxy's
// soak test (e2e) and benchmark (cairn-bench apps) run in a session of the
// busybox base image, which has no such server of its own.
//
// The app is built static from this module's source (the Go toolchain and
// the source tree must be at hand: tests and `make bench` run in the
// repository), uploaded into a virtual folder, mounted into the session
// and started by Command.
package apptest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// Package is the echo app's import path.
const Package = "github.com/cairnhq/cairn/infra/apptest/echoapp"

// BigSize is the length of the app's /big answer.
const BigSize = 1 << 20

// Paths the app serves.
const (
	SmallPath     = "/small"
	BigPath       = "/big"
	WebSocketPath = "/ws"
)

// SmallBody is the app's /small answer.
const SmallBody = "ok\n"

// BinaryName is the file name the app is uploaded as.
const BinaryName = "echoapp"

// Build compiles the echo app, static (CGO_ENABLED=0) for the machine's
// architecture, into dir and returns its path. The working directory must
// be inside this module.
func Build(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, BinaryName)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, Package)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("apptest: build %s: %w: %s", Package, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// Command is the session's command that starts the app from the folder
// mounted at /home/work/<folder> (the binary uploaded as BinaryName) on
// port. The base image's busybox has no cp or chmod links: they are
// called through busybox.
func Command(folder string, port int) string {
	src := "/home/work/" + folder + "/" + BinaryName
	return `sh -c 'busybox cp ` + src + ` /tmp/echoapp && busybox chmod 0755 /tmp/echoapp && exec /tmp/echoapp -listen :` + strconv.Itoa(port) + `'`
}
