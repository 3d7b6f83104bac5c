package runtime

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func validSpec() ContainerSpec {
	return ContainerSpec{
		KernelID:  "0190f3a2-7c1e-7b3d-9a51-2f6c1d8e4b70",
		SessionID: "s1",
		AgentID:   "agent-1",
		Image:     "localhost/cairn/base:latest",
		Command:   []string{"sleep", "1"},
		Env:       map[string]string{"A": "1"},
		CPU:       1500,
		Labels:    map[string]string{"team": "ml"},
		Devices:   []string{"nvidia.com/gpu=GPU-1234", "nvidia.com/gpu=MIG-5678"},
		Mounts: []Mount{
			{Source: "/data/a", Target: "/home/work/a", ReadOnly: true},
			{Source: "/data/b", Target: "/home/work/b"},
		},
		MemoryBytes: 1 << 30,
		Ports:       []PortMapping{{HostIP: "127.0.0.1", HostPort: 30000, ContainerPort: 8888, Protocol: "tcp"}, {HostIP: "::1", HostPort: 30001, ContainerPort: 22}},
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := validSpec().WithDefaults().Validate(); err != nil {
		t.Fatalf("valid spec: %v", err)
	}
	if err := validSpec().Validate(); err != nil {
		t.Fatalf("valid spec without defaults: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*ContainerSpec)
		want   string // in the message
	}{
		{"no kernel id", func(s *ContainerSpec) { s.KernelID = "" }, "kernel id: is empty"},
		{"kernel id with a slash", func(s *ContainerSpec) { s.KernelID = "a/b" }, "kernel id"},
		{"kernel id starting with a dash", func(s *ContainerSpec) { s.KernelID = "-a" }, "kernel id"},
		{"long kernel id", func(s *ContainerSpec) { s.KernelID = strings.Repeat("a", 129) }, "longer than 128"},
		{"no session", func(s *ContainerSpec) { s.SessionID = "" }, "session id"},
		{"no agent", func(s *ContainerSpec) { s.AgentID = "" }, "agent id"},
		{"no image", func(s *ContainerSpec) { s.Image = " " }, "image"},
		{"bad env", func(s *ContainerSpec) { s.Env = map[string]string{"A=B": "x"} }, "env"},
		{"negative cpu", func(s *ContainerSpec) { s.CPU = -1 }, "cpu"},
		{"tiny cpu", func(s *ContainerSpec) { s.CPU = 5 }, "cpu"},
		{"tiny memory", func(s *ContainerSpec) { s.MemoryBytes = 1 << 20 }, "memory"},
		{"soft above hard", func(s *ContainerSpec) { s.Rlimits.NoFile = Rlimit{Soft: 2048, Hard: 1024} }, "rlimit nofile"},
		{"reserved label", func(s *ContainerSpec) { s.Labels = map[string]string{LabelKernel: "other"} }, "reserved"},
		{"not a CDI name", func(s *ContainerSpec) { s.Devices = []string{"/dev/nvidia0"} }, "CDI"},
		{"relative source", func(s *ContainerSpec) { s.Mounts[0].Source = "data" }, "source"},
		{"relative target", func(s *ContainerSpec) { s.Mounts[0].Target = "work" }, "target"},
		{"root target", func(s *ContainerSpec) { s.Mounts[0].Target = "/" }, "target may not be /"},
		{"same target twice", func(s *ContainerSpec) { s.Mounts[1].Target = "/home/work/a/" }, "mounted twice"},
		{"port on every interface", func(s *ContainerSpec) { s.Ports[0].HostIP = "0.0.0.0" }, "not a loopback address"},
		{"port on no address", func(s *ContainerSpec) { s.Ports[0].HostIP = "" }, "not a loopback address"},
		{"host port 0", func(s *ContainerSpec) { s.Ports[0].HostPort = 0 }, "host port 0"},
		{"host port twice", func(s *ContainerSpec) { s.Ports[1].HostPort = 30000 }, "host port 30000 is used twice"},
		{"container port twice", func(s *ContainerSpec) { s.Ports[1].ContainerPort = 8888 }, "published twice"},
		{"udp", func(s *ContainerSpec) { s.Ports[0].Protocol = "udp" }, "only tcp"},
		{"negative grace", func(s *ContainerSpec) { s.StopGrace = -time.Second }, "stop grace"},
		{"userns onto host root", func(s *ContainerSpec) { s.UserNS = &IDMap{HostID: 0, Size: 65536} }, "host id 0"},
		{"empty userns", func(s *ContainerSpec) { s.UserNS = &IDMap{HostID: 100000} }, "size is 0"},
		{"userns past the last id", func(s *ContainerSpec) { s.UserNS = &IDMap{HostID: 4294901760, Size: 65536} }, "go past"},
		{"not a capability", func(s *ContainerSpec) { s.Capabilities = []string{"CHOWN", "cap chown"} }, "capability"},
		{"all capabilities", func(s *ContainerSpec) { s.Capabilities = []string{"ALL"} }, "capability"},
	} {
		s := validSpec()
		tc.change(&s)
		err := s.Validate()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalid mentioning %q", tc.name, err, tc.want)
		}
	}
}

// Every problem is reported at once.
func TestValidateReportsAll(t *testing.T) {
	t.Parallel()
	err := ContainerSpec{}.Validate()
	for _, want := range []string{"kernel id", "session id", "agent id", "image"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("empty spec: %v, want it to mention %q", err, want)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	t.Parallel()
	s := ContainerSpec{Rlimits: Rlimits{NProc: Rlimit{Soft: 10, Hard: 20}}}.WithDefaults()
	if s.Rlimits.NoFile != DefaultRlimit || s.Rlimits.NProc != (Rlimit{10, 20}) || s.StopGrace != DefaultStopGrace {
		t.Errorf("defaults = %+v", s)
	}
	if !slices.Equal(s.Capabilities, DefaultCapabilities) {
		t.Errorf("capabilities = %v, want %v", s.Capabilities, DefaultCapabilities)
	}
	// An empty list is "none", not "the defaults".
	if s := (ContainerSpec{Capabilities: []string{}}).WithDefaults(); len(s.Capabilities) != 0 {
		t.Errorf("no capabilities became %v", s.Capabilities)
	}
	if s.UserNS != nil {
		t.Errorf("a user namespace by default: %+v (the agent decides)", s.UserNS)
	}
}

func TestIDMap(t *testing.T) {
	t.Parallel()
	if err := DefaultIDMap.Validate(); err != nil {
		t.Fatalf("default mapping: %v", err)
	}
	m := IDMap{HostID: 1000, Size: 10}
	for id, want := range map[uint32]bool{0: false, 999: false, 1000: true, 1009: true, 1010: false} {
		if m.Contains(id) != want {
			t.Errorf("Contains(%d) = %v, want %v", id, !want, want)
		}
	}
	if top := (IDMap{HostID: 4294967294, Size: 1}); top.Validate() != nil || !top.Contains(4294967294) {
		t.Errorf("the highest id: %v", top.Validate())
	}
}

func TestLabels(t *testing.T) {
	t.Parallel()
	s := validSpec()
	all := s.AllLabels()
	for k, v := range map[string]string{LabelKernel: s.KernelID, LabelSession: "s1", LabelAgent: "agent-1", LabelManaged: "true", "team": "ml"} {
		if all[k] != v {
			t.Errorf("label %s = %q, want %q", k, all[k], v)
		}
	}
	if ContainerName("k1") != "cairn-k1" {
		t.Errorf("ContainerName = %q", ContainerName("k1"))
	}
	var c Container
	c.SetLabels(all)
	if c.KernelID != s.KernelID || c.SessionID != "s1" || c.AgentID != "agent-1" || !Managed(c.Labels) {
		t.Errorf("from labels: %+v", c)
	}
}

func TestLogOptions(t *testing.T) {
	t.Parallel()
	if o := (LogOptions{}).WithDefaults(); o.MaxBytes != DefaultLogMaxBytes || o.Tail != 0 {
		t.Errorf("defaults = %+v", o)
	}
	if err := (LogOptions{Tail: -1, MaxBytes: -1}).Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative options: %v", err)
	}
}
