package appbench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cairnhq/cairn/infra/devserver"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/images"
)

// ServerConfig is what StartServer runs.
type ServerConfig struct {
	// DataDir holds the server's data (a temporary directory).
	DataDir string
	// Podman is the local agent's Podman service.
	Podman string
	// Images are the images sessions may use besides the base image.
	Images []string
	// Logger receives the server's logs (default: warnings and errors
	// to stderr).
	Logger *slog.Logger
}

// Server is a `cairn dev` running in this process.
type Server struct {
	API, Token, ProxyURL string
	// AgentID is the local agent's id, unique to this run.
	AgentID string
	podman  string
	client  *http.Client
	stop    func() error
}

// StartServer runs `cairn dev` in this process with a local agent on
// cfg.Podman and an app proxy, on free loopback ports.
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	agentID := "bench-apps-" + hex.EncodeToString(b[:])
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	ready := make(chan devserver.Endpoints, 1)
	srvCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() {
		done <- devserver.Run(srvCtx, devserver.Config{
			Listen: "127.0.0.1:0", NATSListen: "127.0.0.1:0", AppProxyListen: "127.0.0.1:0", DataDir: cfg.DataDir,
			AgentID: agentID, Podman: cfg.Podman, Images: cfg.Images, Logger: logger,
			OnReady: func(e devserver.Endpoints) { ready <- e },
		})
	}()
	s := &Server{AgentID: agentID, podman: cfg.Podman, client: &http.Client{Timeout: 2 * time.Minute}}
	s.stop = func() error {
		cancel()
		err := <-done
		RemoveAgentContainers(cfg.Podman, agentID)
		return err
	}
	select {
	case e := <-ready:
		s.API, s.Token, s.ProxyURL = e.APIURL, e.Token, strings.TrimRight(e.AppProxyURL, "/")
		return s, nil
	case err := <-done:
		done <- err
		return nil, errors.Join(fmt.Errorf("cairn dev: %w", err), s.stop())
	case <-ctx.Done():
		return nil, errors.Join(ctx.Err(), s.stop())
	}
}

// Stop ends the server and removes its agent's containers.
func (s *Server) Stop() error { return s.stop() }

// call sends a request to the API with the token and decodes a JSON
// answer into out.
func (s *Server) call(ctx context.Context, method, path string, body any, want int, out any) error {
	return httpapi.CallJSON(ctx, s.client, method, s.API+path, s.Token, body, want, out)
}

// ImagePresent tells whether Podman at uri has image, and why not.
func ImagePresent(ctx context.Context, uri, image string) (bool, string) {
	if err := images.Validate(image); err != nil {
		return false, err.Error()
	}
	cmd := exec.CommandContext(ctx, "podman", "--url", uri, "image", "exists", image)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, ""
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return false, "image " + image + " is absent (scripts/build-images.sh builds it)"
	default:
		return false, fmt.Sprintf("podman image exists %s: %v: %s", image, err, bytes.TrimSpace(stderr.Bytes()))
	}
}

// RemoveAgentContainers removes what an agent left on the Podman service
// at uri (its containers outlive it by design).
func RemoveAgentContainers(uri, agentID string) {
	out, err := exec.Command("podman", "--url", uri, "ps", "-a", "-q", "--filter", "label=cairn.agent="+agentID).Output()
	if err != nil {
		slog.Warn("list the benchmark's containers", "error", err)
		return
	}
	if ids := strings.Fields(string(out)); len(ids) > 0 {
		if err := exec.Command("podman", append([]string{"--url", uri, "rm", "-f", "-t", "0"}, ids...)...).Run(); err != nil {
			slog.Warn("remove the benchmark's containers", "error", err)
		}
	}
}
