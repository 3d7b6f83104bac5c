package config

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestBindEnv(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	dir := fs.String("data-dir", "./data", "")
	listen := fs.String("listen", "127.0.0.1:8080", "")
	n := fs.Int("workers", 1, "")
	if err := fs.Parse([]string{"--listen", ":9"}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CAIRN_DATA_DIR", "/srv/cairn")
	t.Setenv("CAIRN_LISTEN", ":1") // the flag wins
	t.Setenv("CAIRN_WORKERS", "4")
	if err := BindEnv(fs); err != nil {
		t.Fatal(err)
	}
	if *dir != "/srv/cairn" || *listen != ":9" || *n != 4 {
		t.Fatalf("got data-dir=%q listen=%q workers=%d", *dir, *listen, *n)
	}
}

func TestBindEnvReportsBadValues(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Int("workers", 1, "")
	fs.Bool("verbose", false, "")
	t.Setenv("CAIRN_WORKERS", "many")
	t.Setenv("CAIRN_VERBOSE", "perhaps")
	err := BindEnv(fs)
	if err == nil {
		t.Fatal("want an error for bad values")
	}
	for _, name := range []string{"CAIRN_WORKERS", "CAIRN_VERBOSE"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}

func TestRedactDSN(t *testing.T) {
	cases := map[string]string{
		"postgres://u:secret@h/db":   "postgres://u:xxxxx@h/db",
		"postgres://u@h/db":          "postgres://u@h/db",
		"sqlite:///var/lib/cairn.db": "sqlite:///var/lib/cairn.db",
	}
	for in, want := range cases {
		if got := RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}
