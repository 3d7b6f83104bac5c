package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func writeConfig(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cairn.yaml")
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func testFlags() (*pflag.FlagSet, *string, *string, *int, *[]string, *bool) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8080", "")
	dir := fs.String("data-dir", "./data", "")
	n := fs.Int("http-max-conns", 0, "")
	images := fs.StringArray("image", nil, "")
	noAgent := fs.Bool("no-agent", false, "")
	return fs, listen, dir, n, images, noAgent
}

// The file sets what neither the command line nor the environment did;
// lists set a repeatable flag once per element.
func TestBindFile(t *testing.T) {
	path := writeConfig(t, "listen: 0.0.0.0:9000\ndata-dir: /var/lib/cairn\nhttp-max-conns: 512\nno-agent: true\nimage:\n  - a:1\n  - b:2\n", 0o600)
	fs, listen, dir, n, images, noAgent := testFlags()
	if err := fs.Parse([]string{"--data-dir", "/flag"}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CAIRN_LISTEN", "127.0.0.1:7000")
	if err := BindEnv(fs); err != nil {
		t.Fatal(err)
	}
	if err := BindFile(fs, path); err != nil {
		t.Fatal(err)
	}
	if *dir != "/flag" || *listen != "127.0.0.1:7000" {
		t.Errorf("data-dir %q, listen %q: the command line and then the environment must win over the file", *dir, *listen)
	}
	if *n != 512 || !*noAgent || strings.Join(*images, ",") != "a:1,b:2" {
		t.Errorf("from the file: http-max-conns %d, no-agent %v, image %v", *n, *noAgent, *images)
	}
}

// Every problem is reported at once: an unknown key (a typo), a bad
// value, a mapping.
func TestBindFileRefusesMistakes(t *testing.T) {
	path := writeConfig(t, "listn: x\nhttp-max-conns: many\nimage: {a: b}\n", 0o600)
	fs, _, _, _, _, _ := testFlags()
	err := BindFile(fs, path)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"listn" is not a flag`, "http-max-conns", "not a mapping"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// A file others may write is refused; an empty one is an empty
// configuration; a missing one is an error.
func TestBindFileChecksTheFile(t *testing.T) {
	fs, _, _, _, _, _ := testFlags()
	if err := BindFile(fs, writeConfig(t, "listen: x\n", 0o622)); err == nil || !strings.Contains(err.Error(), "lets others change it") {
		t.Errorf("group/world-writable file: %v", err)
	}
	if err := BindFile(fs, writeConfig(t, "", 0o644)); err != nil {
		t.Errorf("empty file: %v", err)
	}
	if err := BindFile(fs, filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file: no error")
	}
}
