package node

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/agents/runtime/podman"
	"github.com/cairnhq/cairn/domain"
)

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c := Config{AgentID: "a", BusURL: "nats://127.0.0.1:4222", DataDir: "/tmp/x"}
	if err := c.Validate(); err != nil {
		t.Fatalf("minimal config: %v", err)
	}
	d := c.WithDefaults()
	if d.PodmanURI != podman.DefaultURI || d.GPUs != "none" || d.Architecture == "" || d.HeartbeatInterval != DefaultHeartbeatInterval ||
		d.StopGrace != runtime.DefaultStopGrace || d.RecordTTL != DefaultRecordTTL || d.LogArchiveBytes != DefaultLogArchiveBytes {
		t.Errorf("defaults = %+v", d)
	}
	if d.UserNS != UserNSPrivate || d.UserNSHostID != runtime.DefaultIDMap.HostID || d.UserNSSize != runtime.DefaultIDMap.Size ||
		!slices.Equal(d.Capabilities, runtime.DefaultCapabilities) {
		t.Errorf("isolation defaults = %q %d+%d %v", d.UserNS, d.UserNSHostID, d.UserNSSize, d.Capabilities)
	}
	if d.TerminalDetachTimeout != DefaultTerminalDetachTimeout || d.TerminalScrollback != DefaultTerminalScrollback ||
		d.TerminalsPerKernel != DefaultTerminalsPerKernel || d.TerminalPingInterval != DefaultTerminalPingInterval {
		t.Errorf("terminal defaults = %s %d %d %s", d.TerminalDetachTimeout, d.TerminalScrollback, d.TerminalsPerKernel, d.TerminalPingInterval)
	}
	if m := c.idMap(); m == nil || *m != runtime.DefaultIDMap {
		t.Errorf("default mapping = %+v, want %+v", m, runtime.DefaultIDMap)
	}
	if m := (Config{UserNS: UserNSHost}).idMap(); m != nil {
		t.Errorf("mapping under host = %+v, want none", m)
	}
	if Durable("a") != "agent-a" {
		t.Errorf("durable = %q", Durable("a"))
	}
}

// Validate reports every problem at once.
func TestConfigValidate(t *testing.T) {
	t.Parallel()
	err := Config{
		AgentID: "a.b", BusURL: "http://x", PodmanURI: "http://podman", GPUs: "cuda", Listen: "nope",
		Advertise: "ftp://x", CPU: -1, MemoryBytes: -1, HeartbeatInterval: -time.Second, RetryMin: time.Minute, RetryMax: time.Second,
		LogArchiveBytes: -1, Rlimits: runtime.Rlimits{NoFile: runtime.Rlimit{Soft: 2, Hard: 1}},
		UserNS: "auto", Capabilities: []string{"CHOWN", "CAP_NOPE"}, AppPortRange: PortRange{First: 31000, Last: 30000},
		TerminalDetachTimeout: -time.Second, TerminalScrollback: -1, TerminalsPerKernel: -1, TerminalPingInterval: -time.Second,
	}.Validate()
	if err == nil {
		t.Fatal("a bad config validates")
	}
	for _, want := range []string{"agent id", "bus url", "podman uri", "gpus", "data dir", "listen", "advertise", "cpu", "memory",
		"heartbeat interval", "retry min", "log archive bytes", "rlimit nofile", "kernel userns", "CAP_NOPE", "app ports",
		"terminal detach timeout", "terminal scrollback", "terminals per kernel", "terminal ping interval"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant it to mention %q", err, want)
		}
	}
	ok := Config{AgentID: "a", BusURL: "nats://h:1", DataDir: "d"}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"ids past the last", func(c *Config) { c.UserNSHostID, c.UserNSSize = 4294967000, 65536 }, "kernel userns"},
		{"all capabilities", func(c *Config) { c.Capabilities = []string{"all"} }, "ALL"},
	} {
		c := ok
		tc.change(&c)
		if err := c.Validate(); !errors.Is(err, runtime.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalid mentioning %q", tc.name, err, tc.want)
		}
	}
	for _, c := range []Config{
		{UserNS: UserNSHost, UserNSHostID: 4294967000, UserNSSize: 65536}, // the mapping is unused
		{Capabilities: []string{}},
		{Capabilities: []string{"net_bind_service", "CAP_SYS_PTRACE"}},
	} {
		c.AgentID, c.BusURL, c.DataDir = "a", "nats://h:1", "d"
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	long := Config{AgentID: strings.Repeat("a", 125), BusURL: "nats://h:1", DataDir: "d"}
	if err := long.Validate(); err == nil || !strings.Contains(err.Error(), "durable") {
		t.Errorf("an id too long for its durable: %v", err)
	}
	if _, err := New(Config{}, nil); err == nil || !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("New with an empty config: %v", err)
	}
}

func TestSanitizeAgentID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"gpu-07":                 "gpu-07",
		"gpu07.cluster.example":  "gpu07-cluster-example",
		"nœud 3":                 "n-ud-3",
		"":                       "",
		strings.Repeat("a", 200): strings.Repeat("a", maxAgentIDLength),
	} {
		got := SanitizeAgentID(in)
		if got != want {
			t.Errorf("SanitizeAgentID(%q) = %q, want %q", in, got, want)
		}
		if got != "" && (Config{AgentID: got, BusURL: "nats://h:1", DataDir: "d"}).Validate() != nil {
			t.Errorf("SanitizeAgentID(%q) = %q is not a valid agent id", in, got)
		}
	}
}
