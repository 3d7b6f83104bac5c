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

func TestBytes(t *testing.T) {
	for in, want := range map[string]Bytes{"0": 0, "10GiB": 10 << 30, "64g": 64 << 30, "512MiB": 512 << 20, "1000": 1000, "1.5k": 1536} {
		var b Bytes
		if err := b.Set(in); err != nil || b != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "-1", "ten", "10 parsecs"} {
		var b Bytes
		if err := b.Set(in); err == nil {
			t.Errorf("Set(%q) accepted: %d", in, b)
		}
	}
	b := Bytes(10 << 30)
	if b.String() != "10GiB" {
		t.Errorf("String = %q", b.String())
	}
}
