package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// buildTags are the tags the podman bindings need (the Makefile's).
const buildTags = "remote,exclude_graphdriver_btrfs,btrfs_noversion,exclude_graphdriver_devicemapper,containers_image_openpgp"

// cairnBin is the binary TestMain built.
var cairnBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cairn-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	cairnBin = filepath.Join(dir, "cairn")
	args := []string{"build", "-tags=" + buildTags, "-o", cairnBin}
	race := raceDetector
	switch os.Getenv("CAIRN_E2E_RACE") {
	case "1":
		race = true
	case "0":
		race = false
	}
	if race {
		args = append(args, "-race")
	}
	args = append(args, "github.com/cairnhq/cairn/cmd/cairn")
	start := time.Now()
	cmd := exec.Command("go", args...)
	cmd.Dir = ".." // the module's root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building cairn:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: built %s (race detector: %v) in %s\n", cairnBin, race, time.Since(start).Round(time.Millisecond))
	return m.Run()
}
