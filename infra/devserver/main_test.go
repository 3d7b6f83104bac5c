package devserver

import (
	"os"
	"testing"
)

// TestMain runs the test binary as a server child process when a test
// asks for one (the crash and flood tests), and the tests otherwise.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		os.Exit(runChild(dir))
	}
	if dir := os.Getenv(floodChildEnv); dir != "" {
		os.Exit(floodChild(dir, os.Getenv(floodModeEnv)))
	}
	os.Exit(m.Run())
}
