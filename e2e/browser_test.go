package e2e

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/browsertest"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// TestBrowser runs the Web-UI's browser tests (web/ui/test/*.test.mjs:
// Node's test runner, playwright-core driving Debian's Chromium) against a
// `cairn dev` with its Podman agent, logged in as its superadmin.
func TestBrowser(t *testing.T) {
	tools := browsertest.Require(t, true)
	d := startDev(t, podmantest.URL(t))
	raw, err := os.ReadFile(filepath.Join(d.dataDir, "credentials.json"))
	if err != nil {
		t.Fatal(err)
	}
	var creds struct {
		Email    string `json:"email"`
		Password string `json:"password"`
		Token    string `json:"token"`
	}
	if err := json.Unmarshal(raw, &creds); err != nil {
		t.Fatal(err)
	}
	// CAIRN_BROWSER_TESTS narrows the files while working on one page
	// (e.g. data.test.mjs); unset, every file runs.
	pattern := cmp.Or(os.Getenv("CAIRN_BROWSER_TESTS"), "*.test.mjs")
	files, err := filepath.Glob(filepath.Join(tools.UIDir, "test", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no browser tests in %s/test: %v", tools.UIDir, err)
	}
	args := []string{"--test", "--test-concurrency=1", "--test-reporter=spec"}
	for _, f := range files {
		args = append(args, filepath.Join("test", filepath.Base(f)))
	}
	tools.Run(t, 15*time.Minute, map[string]string{
		"CAIRN_URL": d.api, "CAIRN_EMAIL": creds.Email, "CAIRN_PASSWORD": creds.Password, "CAIRN_TOKEN": creds.Token,
	}, args...)
}
