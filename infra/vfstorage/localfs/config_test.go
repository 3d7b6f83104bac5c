package localfs

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestParseHosts(t *testing.T) {
	hs, err := ParseHosts("local:/var/lib/cairn/vfolders, nfs1:/mnt/nfs:with:colons,,")
	if err != nil {
		t.Fatal(err)
	}
	want := Hosts{{"local", "/var/lib/cairn/vfolders"}, {"nfs1", "/mnt/nfs:with:colons"}}
	if !slices.Equal(hs, want) {
		t.Fatalf("ParseHosts = %v, want %v", hs, want)
	}
	if got := hs.String(); got != "local:/var/lib/cairn/vfolders,nfs1:/mnt/nfs:with:colons" {
		t.Fatalf("String() = %q", got)
	}
	_, err = ParseHosts("nocolon,also-bad,ok:/x")
	if err == nil || !strings.Contains(err.Error(), "nocolon") || !strings.Contains(err.Error(), "also-bad") {
		t.Fatalf("bad entries: %v", err)
	}
}

// TestHostsFlag: a repeated flag adds hosts.
func TestHostsFlag(t *testing.T) {
	var hs Hosts
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.Var(&hs, "vfolder-hosts", "storage hosts")
	if err := fs.Parse([]string{"--vfolder-hosts", "a:/a,b:/b", "--vfolder-hosts=c:/c"}); err != nil {
		t.Fatal(err)
	}
	if got := hs.String(); got != "a:/a,b:/b,c:/c" {
		t.Fatalf("hosts %q", got)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string // every substring the error must hold; none: valid
	}{
		{"one host", Config{Hosts: Hosts{{"local", "/var/lib/cairn/vfolders"}}}, nil},
		{"several", Config{Hosts: Hosts{{"a", "/srv/a"}, {"b-2.x_y", "/srv/b"}, {"c", "/srv/ab"}}, UsageTTL: time.Second}, nil},
		{"no host", Config{}, []string{"at least one"}},
		{"bad names", Config{Hosts: Hosts{{"", "/a"}, {"Upper", "/b"}, {"-x", "/c"}, {strings.Repeat("n", 64), "/d"}}},
			[]string{`":/a"`, `"Upper:/b"`, `"-x:/c"`, "nnnn"}},
		{"duplicate name", Config{Hosts: Hosts{{"a", "/x"}, {"a", "/y"}}}, []string{"used twice"}},
		{"bad paths", Config{Hosts: Hosts{{"a", "rel/dir"}, {"b", "/x/../y"}, {"c", "/"}, {"d", "/trailing/"}}},
			[]string{"a:rel/dir", "absolute", "b:/x/../y", "clean", "c:/", "root", "d:/trailing/"}},
		{"overlapping paths", Config{Hosts: Hosts{{"a", "/srv"}, {"b", "/srv/b"}, {"c", "/srv"}}},
			[]string{`"b:/srv/b"`, `"c:/srv"`, "overlaps"}},
		{"negative durations", Config{Hosts: Hosts{{"a", "/a"}}, UsageTTL: -1, StagingMaxAge: -time.Second},
			[]string{"usage TTL", "staging max age"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{}.WithDefaults()
	if c.UsageTTL != DefaultUsageTTL || c.StagingMaxAge != DefaultStagingMaxAge {
		t.Fatalf("defaults %+v", c)
	}
	c = Config{UsageTTL: time.Second}.WithDefaults()
	if c.UsageTTL != time.Second {
		t.Fatalf("an explicit TTL was overridden: %v", c.UsageTTL)
	}
}

// TestOpen: a missing host directory fails unless CreateHostDirs; a file
// is never a host; every bad host is reported at once.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	missing := dir + "/missing"
	_, err := Open(Config{Hosts: Hosts{{"a", missing}, {"b", dir + "/missing2"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "host a:") || !strings.Contains(err.Error(), "host b:") {
		t.Fatalf("missing dirs: %v", err)
	}
	s := openTest(t, Config{Hosts: Hosts{{"a", missing}}, CreateHostDirs: true})
	if hs := s.Hosts(); len(hs) != 1 || hs[0].Name != "a" || hs[0].Backend != Backend || hs[0].EnforcesQuota {
		t.Fatalf("Hosts() = %+v", hs)
	}
	if _, err := Open(Config{}, nil); err == nil {
		t.Fatal("Open accepted an invalid config")
	}
	file := dir + "/file"
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Config{Hosts: Hosts{{"a", file}}, CreateHostDirs: true}, nil); err == nil {
		t.Fatal("Open accepted a file as a host directory")
	}
}
