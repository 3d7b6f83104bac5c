package domain

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func validRequest() SessionRequest {
	return SessionRequest{
		ID:        sessionID,
		KernelIDs: []uuid.UUID{kernelA},
		Spec: SessionSpec{
			Name: "train-1", Owner: Owner{UserID: "u1", AccessKey: "AKIA1"},
			Domain: "default", Project: "ml", ResourceGroup: "gpu",
			Type: SessionBatch, Image: "cr.io/pytorch:2.4", Command: "python train.py",
			Resources: perKernel(),
		},
		At: at(0),
	}
}

func TestRequestSessionRecordsTheRequest(t *testing.T) {
	req := validRequest()
	req.Spec.Env = map[string]string{"SEED": "1"}
	req.Spec.Resources[SlotCUDADevice] = 0 // zero amounts are dropped
	got, err := RequestSession(req)
	if err != nil {
		t.Fatal(err)
	}
	want := batch()
	want.Env = map[string]string{"SEED": "1"}
	checkEvents(t, got, []Event{want})

	s := mustSession(t, got)
	if s.Status() != StatusPending || s.Priority() != DefaultPriority || s.ClusterMode() != ClusterSingleNode || s.Revision() != 0 {
		t.Fatalf("status %s priority %d mode %s revision %d", s.Status(), s.Priority(), s.ClusterMode(), s.Revision())
	}
	if k := s.Kernels(); len(k) != 1 || k[0].Role() != KernelMain || k[0].Status() != StatusPending {
		t.Fatalf("kernels %+v", k)
	}
}

// Pre-opened ports are recorded, in the order asked.
func TestRequestSessionPreopenPorts(t *testing.T) {
	req := validRequest()
	req.Spec.PreopenPorts = []int{9000, 8080}
	got, err := RequestSession(req)
	if err != nil {
		t.Fatal(err)
	}
	want := batch()
	want.PreopenPorts = []int{9000, 8080}
	checkEvents(t, got, []Event{want})
}

// The ports a kernel publishes: the image's, then each pre-opened port
// that is not one of them, named port-<n>.
func TestSessionServicePorts(t *testing.T) {
	image := []ServicePort{{Name: "jupyter", Protocol: "http", Port: 8888}, {Name: "ssh", Protocol: "tcp", Port: 22}}
	got := SessionServicePorts(image, []int{9000, 8888, 7000})
	want := []ServicePort{image[0], image[1], {Name: "port-9000", Protocol: "preopen", Port: 9000}, {Name: "port-7000", Protocol: "preopen", Port: 7000}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("port %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if SessionServicePorts(nil, nil) != nil {
		t.Error("no ports: want nil")
	}
}

func TestCheckPublishedPorts(t *testing.T) {
	ok := []PublishedPort{{Name: "jupyter", Protocol: "http", ContainerPort: 8888, HostPort: 30000}, {Name: "port-9000", Protocol: "preopen", ContainerPort: 9000, HostPort: 30001}}
	if err := CheckPublishedPorts("op", "service_ports", ok); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func([]PublishedPort){
		"no name":              func(p []PublishedPort) { p[0].Name = "" },
		"name twice":           func(p []PublishedPort) { p[1].Name = "jupyter" },
		"unknown protocol":     func(p []PublishedPort) { p[0].Protocol = "udp" },
		"container port 0":     func(p []PublishedPort) { p[0].ContainerPort = 0 },
		"host port too big":    func(p []PublishedPort) { p[0].HostPort = 70000 },
		"host port twice":      func(p []PublishedPort) { p[1].HostPort = 30000 },
		"container port twice": func(p []PublishedPort) { p[1].ContainerPort = 8888 },
	} {
		p := append([]PublishedPort(nil), ok...)
		edit(p)
		err := CheckPublishedPorts("op", "service_ports", p)
		var de *Error
		if !errors.As(err, &de) || de.Field != "service_ports" {
			t.Errorf("%s: %v, want an error naming service_ports", name, err)
		}
	}
}

// TestRequestSessionSchedulingFields: starts_at, dependencies and the
// architecture are recorded (optional fields of session.requested) and
// folded into the session.
func TestRequestSessionSchedulingFields(t *testing.T) {
	req := validRequest()
	req.Spec.StartsAt = at(3600).In(time.FixedZone("CET", 3600))
	req.Spec.Dependencies = []uuid.UUID{kernelB}
	req.Spec.Architecture = "aarch64"
	got, err := RequestSession(req)
	if err != nil {
		t.Fatal(err)
	}
	want := batch()
	want.StartsAt, want.Dependencies, want.Architecture = at(3600), []uuid.UUID{kernelB}, "aarch64"
	checkEvents(t, got, []Event{want})
	checkRoundTrip(t, got)
	s := mustSession(t, got)
	if !s.StartsAt().Equal(at(3600)) || len(s.Dependencies()) != 1 || s.Dependencies()[0] != kernelB || s.Architecture() != "aarch64" {
		t.Fatalf("starts at %v, dependencies %v, architecture %q", s.StartsAt(), s.Dependencies(), s.Architecture())
	}
	// Without them, the event is what it always was (no new keys).
	plain, _ := RequestSession(validRequest())
	if line := wire(t, plain)[0]; strings.Contains(line, "starts_at") || strings.Contains(line, "dependencies") || strings.Contains(line, "architecture") {
		t.Fatalf("optional fields written: %s", line)
	}
}

func TestRequestSessionCluster(t *testing.T) {
	req := validRequest()
	req.Spec.ClusterSize, req.Spec.ClusterMode = 2, ClusterMultiNode
	req.KernelIDs = []uuid.UUID{kernelA, kernelB}
	prio := 0
	req.Spec.Priority = &prio
	got, err := RequestSession(req)
	if err != nil {
		t.Fatal(err)
	}
	want := requestedEvent(SessionBatch, ClusterMultiNode, kernelA, kernelB)
	want.Priority = 0
	checkEvents(t, got, []Event{want})
}

// TestRequestSessionValidation: every bad input is KindInvalid and names
// its field.
func TestRequestSessionValidation(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*SessionRequest)
		field string
	}{
		{"no id", func(r *SessionRequest) { r.ID = uuid.Nil }, "id"},
		{"no time", func(r *SessionRequest) { r.At = time.Time{} }, "at"},
		{"no name", func(r *SessionRequest) { r.Spec.Name = "" }, "name"},
		{"bad name", func(r *SessionRequest) { r.Spec.Name = "-x" }, "name"},
		{"name with space", func(r *SessionRequest) { r.Spec.Name = "a b" }, "name"},
		{"long name", func(r *SessionRequest) { r.Spec.Name = string(make([]byte, 65)) }, "name"},
		{"no user", func(r *SessionRequest) { r.Spec.Owner.UserID = "" }, "owner.user_id"},
		{"no access key", func(r *SessionRequest) { r.Spec.Owner.AccessKey = "" }, "owner.access_key"},
		{"no domain", func(r *SessionRequest) { r.Spec.Domain = " " }, "domain"},
		{"no project", func(r *SessionRequest) { r.Spec.Project = "" }, "project"},
		{"no resource group", func(r *SessionRequest) { r.Spec.ResourceGroup = "" }, "resource_group"},
		{"unknown type", func(r *SessionRequest) { r.Spec.Type = "daemon" }, "type"},
		{"empty type", func(r *SessionRequest) { r.Spec.Type = "" }, "type"},
		{"empty image", func(r *SessionRequest) { r.Spec.Image = "" }, "image"},
		{"image with space", func(r *SessionRequest) { r.Spec.Image = "a b" }, "image"},
		{"batch without command", func(r *SessionRequest) { r.Spec.Command = "  " }, "command"},
		{"env name with =", func(r *SessionRequest) { r.Spec.Env = map[string]string{"A=B": "x"} }, "env.A=B"},
		{"empty env name", func(r *SessionRequest) { r.Spec.Env = map[string]string{"": "x"} }, "env"},
		{"priority below 0", func(r *SessionRequest) { p := -1; r.Spec.Priority = &p }, "priority"},
		{"priority above 100", func(r *SessionRequest) { p := 101; r.Spec.Priority = &p }, "priority"},
		{"unknown cluster mode", func(r *SessionRequest) { r.Spec.ClusterMode = "mesh" }, "cluster_mode"},
		{"negative cluster size", func(r *SessionRequest) { r.Spec.ClusterSize = -1 }, "cluster_size"},
		{"huge cluster size", func(r *SessionRequest) { r.Spec.ClusterSize = MaxClusterSize + 1 }, "cluster_size"},
		{"kernel ids short", func(r *SessionRequest) { r.Spec.ClusterSize = 2 }, "kernel_ids"},
		{"kernel id nil", func(r *SessionRequest) { r.KernelIDs = []uuid.UUID{uuid.Nil} }, "kernel_ids"},
		{"kernel id twice", func(r *SessionRequest) {
			r.Spec.ClusterSize, r.KernelIDs = 2, []uuid.UUID{kernelA, kernelA}
		}, "kernel_ids"},
		{"preopen port 0", func(r *SessionRequest) { r.Spec.PreopenPorts = []int{0} }, "preopen_ports"},
		{"preopen port 65536", func(r *SessionRequest) { r.Spec.PreopenPorts = []int{8080, 65536} }, "preopen_ports"},
		{"preopen port twice", func(r *SessionRequest) { r.Spec.PreopenPorts = []int{8080, 8080} }, "preopen_ports"},
		{"too many preopen ports", func(r *SessionRequest) {
			for p := range MaxPreopenPorts + 1 {
				r.Spec.PreopenPorts = append(r.Spec.PreopenPorts, 9000+p)
			}
		}, "preopen_ports"},
		{"no resources", func(r *SessionRequest) { r.Spec.Resources = nil }, "resources"},
		{"all zero resources", func(r *SessionRequest) { r.Spec.Resources = Slots{SlotCPU: 0} }, "resources"},
		{"no cpu", func(r *SessionRequest) { delete(r.Spec.Resources, SlotCPU) }, "resources.cpu"},
		{"zero cpu", func(r *SessionRequest) { r.Spec.Resources[SlotCPU] = 0 }, "resources.cpu"},
		{"negative cpu", func(r *SessionRequest) { r.Spec.Resources[SlotCPU] = -1000 }, "resources.cpu"},
		{"no mem", func(r *SessionRequest) { delete(r.Spec.Resources, SlotMem) }, "resources.mem"},
		{"negative mem", func(r *SessionRequest) { r.Spec.Resources[SlotMem] = -1 }, "resources.mem"},
		{"fractional bytes", func(r *SessionRequest) { r.Spec.Resources[SlotMem] = gib(1) + 1 }, "resources.mem"},
		{"unknown slot", func(r *SessionRequest) { r.Spec.Resources["tpu.core"] = Units(1) }, "resources.tpu.core"},
		{"devices and shares", func(r *SessionRequest) { r.Spec.Resources[SlotCUDADevice] = Units(1) }, "resources"},
		{"shares and MIG", func(r *SessionRequest) { r.Spec.Resources["cuda.device:1g.10gb-mig"] = Units(1) }, "resources"},
		{"devices and MIG", func(r *SessionRequest) {
			delete(r.Spec.Resources, SlotCUDAShares)
			r.Spec.Resources[SlotCUDADevice] = Units(1)
			r.Spec.Resources["cuda.device:1g.10gb-mig"] = Units(1)
		}, "resources"},
		{"shares finer than 0.01", func(r *SessionRequest) { r.Spec.Resources[SlotCUDAShares] = q("0.255") }, "resources.cuda.shares"},
		{"fractional devices", func(r *SessionRequest) {
			delete(r.Spec.Resources, SlotCUDAShares)
			r.Spec.Resources[SlotCUDADevice] = q("1.5")
		}, "resources.cuda.device"},
		{"two of one MIG profile", func(r *SessionRequest) {
			delete(r.Spec.Resources, SlotCUDAShares)
			r.Spec.Resources["cuda.device:1g.10gb-mig"] = Units(2)
		}, "resources.cuda.device:1g.10gb-mig"},
		{"dependency on itself", func(r *SessionRequest) { r.Spec.Dependencies = []uuid.UUID{r.ID} }, "dependencies"},
		{"dependency twice", func(r *SessionRequest) { r.Spec.Dependencies = []uuid.UUID{kernelB, kernelB} }, "dependencies"},
		{"dependency nil", func(r *SessionRequest) { r.Spec.Dependencies = []uuid.UUID{uuid.Nil} }, "dependencies"},
		{"too many dependencies", func(r *SessionRequest) {
			for range MaxDependencies + 1 {
				r.Spec.Dependencies = append(r.Spec.Dependencies, uuid.New())
			}
		}, "dependencies"},
		{"architecture with space", func(r *SessionRequest) { r.Spec.Architecture = "x86 64" }, "architecture"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := validRequest()
			c.edit(&req)
			got, err := RequestSession(req)
			if err == nil {
				t.Fatalf("accepted: %v", wire(t, got))
			}
			if !errors.Is(err, ErrInvalid) || KindOf(err) != KindInvalid {
				t.Fatalf("error %v is not KindInvalid", err)
			}
			if fields := invalidFields(err); !contains(fields, c.field) {
				t.Fatalf("error %v names fields %v, want %q", err, fields, c.field)
			}
		})
	}
}

func TestRequestSessionValidAccelerators(t *testing.T) {
	for name, slots := range map[string]Slots{
		"cpu only":    {SlotCPU: q("0.5"), SlotMem: Units(64 << 20)},
		"whole GPUs":  {SlotCPU: Units(1), SlotMem: gib(1), SlotCUDADevice: Units(2)},
		"shares 0.01": {SlotCPU: Units(1), SlotMem: gib(1), SlotCUDAShares: q("0.01"), SlotCUDAMem: gib(4)},
		"MIG":         {SlotCPU: Units(1), SlotMem: gib(1), "cuda.device:1g.10gb-mig": Units(1)},
	} {
		t.Run(name, func(t *testing.T) {
			req := validRequest()
			req.Spec.Resources = slots
			if _, err := RequestSession(req); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestRequestSessionReportsEveryProblem(t *testing.T) {
	req := validRequest()
	req.Spec.Image, req.Spec.Type = "", "daemon"
	_, err := RequestSession(req)
	if fields := invalidFields(err); !contains(fields, "image") || !contains(fields, "type") {
		t.Fatalf("fields %v: want image and type", fields)
	}
	if KindOf(err) != KindInvalid {
		t.Fatalf("kind %v", KindOf(err))
	}
}

func TestInteractiveSessionNeedsNoCommand(t *testing.T) {
	req := validRequest()
	req.Spec.Type, req.Spec.Command = SessionInteractive, ""
	if _, err := RequestSession(req); err != nil {
		t.Fatal(err)
	}
}

// invalidFields lists the fields named by the *Error values in err's tree.
func invalidFields(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		var de *Error
		if errors.As(err, &de) && de.Field != "" {
			out = append(out, de.Field)
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
