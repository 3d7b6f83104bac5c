package devserver

import (
	"strings"
	"testing"
	"time"
)

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c := Config{}.WithDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	for name, got := range map[string]string{
		"listen": c.Listen, "data dir": c.DataDir, "nats listen": c.NATSListen,
		"agent id": c.AgentID, "gpus": c.GPUs, "podman": c.Podman, "store": c.Store,
	} {
		if got == "" {
			t.Errorf("%s has no default", name)
		}
	}
	if c.VFolderDefaultQuota != DefaultVFolderQuota || c.VFolderMaxUpload != DefaultVFolderMaxUpload || c.VFolderOrphanGrace != DefaultVFolderOrphanGrace {
		t.Errorf("vfolder limits %d, %d, %s: want the defaults", c.VFolderDefaultQuota, c.VFolderMaxUpload, c.VFolderOrphanGrace)
	}
	if c.HTTPMaxConns <= 0 || c.HTTPMaxConnsPerIP <= 0 || c.HTTPMaxConnsPerIP > c.HTTPMaxConns || c.HTTPReadTimeout <= 0 || c.HTTPIdleTimeout <= 0 || c.UploadIdleTimeout <= 0 {
		t.Errorf("http limits and timeouts without sane defaults: %+v", c.LogValue())
	}
	if c.Store != "sqlite://data/cairn.db" {
		t.Errorf("default store %q, want SQLite in the data dir", c.Store)
	}
	if err := (Config{AppProxyListen: AppProxyOff, AppProxyURL: "https://apps.example.com", AppProxyDomain: "apps.example.com"}).Validate(); err != nil {
		t.Errorf("a proxy served elsewhere, with its domain: %v", err)
	}
	if got := (Config{DataDir: "/var/lib/x"}).WithDefaults().Store; got != "sqlite:///var/lib/x/cairn.db" {
		t.Errorf("store for /var/lib/x = %q", got)
	}
}

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string
	}{
		{"listen without port", Config{Listen: "localhost"}, []string{"listen"}},
		{"port out of range", Config{NATSListen: "127.0.0.1:70000"}, []string{"nats listen"}},
		{"same address twice", Config{Listen: "127.0.0.1:9000", NATSListen: "127.0.0.1:9000"}, []string{"both"}},
		{"bad agent id", Config{AgentID: "has.dot"}, []string{"agent id"}},
		{"bad gpus", Config{GPUs: "mock:nosuch"}, []string{"gpus"}},
		{"bad kernel userns", Config{KernelUserNS: "auto"}, []string{"kernel userns"}},
		{"bad image", Config{Images: []string{"has space"}}, []string{"image"}},
		{"negative durations", Config{MaxWait: -time.Second, ShutdownTimeout: -1, VFolderOrphanGrace: -1}, []string{"max wait", "shutdown timeout", "vfolder orphan grace"}},
		{"sizes below NoLimit", Config{VFolderDefaultQuota: -2, VFolderMaxUpload: -5}, []string{"vfolder default quota", "vfolder max upload"}},
		{"negative replay cache size", Config{AuthReplayCacheSize: -1}, []string{"auth replay cache size"}},
		{"negative http limits and timeouts", Config{HTTPMaxConns: -1, HTTPMaxConnsPerIP: -1, HTTPReadTimeout: -1, HTTPIdleTimeout: -1, UploadIdleTimeout: -1},
			[]string{"http max conns -1", "http max conns per ip", "http read timeout", "http idle timeout", "upload idle timeout"}},
		{"agent given up before it is disconnected", Config{HeartbeatTimeout: time.Minute, AgentLostTimeout: time.Second}, []string{"agent lost timeout"}},
		{"app proxy off, served nowhere", Config{AppProxyListen: AppProxyOff}, []string{"app proxy url"}},
		{"bad app proxy domain", Config{AppProxyDomain: "Apps"}, []string{"app proxy domain"}},
		{"audit head key without a sink", Config{AuditHeadKey: "/k"}, []string{"audit head key"}},
		{"audit head sinks without a key", Config{AuditHeadSinks: []string{"syslog:"}}, []string{"audit head sinks"}},
		{"bad audit head sink and numbers", Config{AuditHeadKey: "/k", AuditHeadSinks: []string{"file:relative"}, AuditHeadEvery: -1, AuditHeadInterval: -1},
			[]string{"audit head sink", "audit head every", "audit head interval"}},
		{"all at once", Config{Listen: "x", AgentID: "a b", Images: []string{""}}, []string{"listen", "agent id", "image"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.cfg.Validate()
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	// Two free ports picked by the system are not the same address.
	if err := (Config{Listen: "127.0.0.1:0", NATSListen: "127.0.0.1:0"}).Validate(); err != nil {
		t.Errorf("port 0 twice refused: %v", err)
	}
}

func TestJoinURL(t *testing.T) {
	t.Parallel()
	if u, loop := joinURL("127.0.0.1:4222", 4222); u != "nats://127.0.0.1:4222" || !loop {
		t.Errorf("loopback: %s %v", u, loop)
	}
	if u, loop := joinURL("0.0.0.0:0", 35000); strings.Contains(u, "0.0.0.0") || !strings.HasSuffix(u, ":35000") || loop {
		t.Errorf("every interface: %s %v, want this host's name and the bound port", u, loop)
	}
	if u, loop := joinURL("10.1.2.3:4222", 4222); u != "nats://10.1.2.3:4222" || loop {
		t.Errorf("interface address: %s %v", u, loop)
	}
}
