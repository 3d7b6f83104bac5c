package accelerator

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// nvidiaYAML is shaped like what nvidia-ctk cdi generate writes (both
// index and uuid names).
const nvidiaYAML = `---
cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: "0"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
- name: GPU-4c1e7d0a-0000-1111-2222-333344445555
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
- name: "0:1"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia-caps/nvidia-cap21
- name: all
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
containerEdits:
  env:
  - NVIDIA_VISIBLE_DEVICES=void
  hooks:
  - hookName: createContainer
    path: /usr/bin/nvidia-cdi-hook
    args: [nvidia-cdi-hook, update-ldcache]
`

const nvidiaJSON = `{"cdiVersion":"0.6.0","kind":"nvidia.com/gpu","devices":[{"name":"MIG-9d0c4a55-aaaa-bbbb-cccc-ddddeeeeffff","containerEdits":{}},{"name":"0"}],"containerEdits":{}}`

const otherVendorJSON = `{"cdiVersion":"0.6.0","kind":"vendor.example/fpga","devices":[{"name":"fpga0"}],"containerEdits":{}}`

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDetectCDI(t *testing.T) {
	t.Parallel()
	etc, run := t.TempDir(), t.TempDir()
	write(t, filepath.Join(etc, "nvidia.yaml"), nvidiaYAML)
	write(t, filepath.Join(etc, "fpga.json"), otherVendorJSON)
	write(t, filepath.Join(etc, "README.txt"), "kind: nvidia.com/gpu\n")
	write(t, filepath.Join(run, "generated", "nvidia-mig.json"), nvidiaJSON)
	write(t, filepath.Join(run, "broken.yml"), "kind: [nvidia.com/gpu\n")
	write(t, filepath.Join(run, "nameless.json"), `{"kind":"nvidia.com/gpu","devices":[{}]}`)

	info, err := DetectCDI(etc, filepath.Join(t.TempDir(), "missing"), run)
	if err != nil {
		t.Fatalf("DetectCDI: %v", err)
	}
	if !info.Found() {
		t.Fatal("no NVIDIA spec found")
	}
	var specs []string
	for _, s := range info.Specs {
		specs = append(specs, filepath.Base(s))
	}
	if !slices.Equal(specs, []string{"nvidia.yaml", "nvidia-mig.json"}) {
		t.Errorf("specs = %v", specs)
	}
	want := []string{"0", "0:1", "GPU-4c1e7d0a-0000-1111-2222-333344445555", "MIG-9d0c4a55-aaaa-bbbb-cccc-ddddeeeeffff", "all"}
	if !slices.Equal(info.Devices, want) {
		t.Errorf("devices = %q, want %q", info.Devices, want)
	}
	if len(info.Skipped) != 2 {
		t.Errorf("skipped = %v, want broken.yml and nameless.json", info.Skipped)
	}
	if !info.Has("0:1") || info.Has("fpga0") || info.Has("1") {
		t.Error("Has answers wrong")
	}
	if got := QualifiedName("0:1"); got != "nvidia.com/gpu=0:1" {
		t.Errorf("QualifiedName = %q", got)
	}
}

func TestDetectCDINone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "fpga.json"), otherVendorJSON)
	for name, dirs := range map[string][]string{
		"only another vendor": {dir},
		"missing directories": {filepath.Join(dir, "a"), filepath.Join(dir, "b")},
	} {
		info, err := DetectCDI(dirs...)
		if err != nil || info.Found() || len(info.Devices) != 0 {
			t.Errorf("%s: %+v, %v: want nothing found", name, info, err)
		}
	}
}

func TestDetectCDIFollowsSymlinkedDir(t *testing.T) {
	t.Parallel()
	target, links := t.TempDir(), t.TempDir()
	write(t, filepath.Join(target, "nvidia.yaml"), nvidiaYAML)
	link := filepath.Join(links, "cdi")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	info, err := DetectCDI(link)
	if err != nil || !info.Found() {
		t.Fatalf("through a symlinked directory: %+v, %v", info, err)
	}
}

func TestParseCDISpec(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		data    string
		json    bool
		kind    string
		devices []string
		bad     bool
	}{
		"yaml":            {data: nvidiaYAML, kind: "nvidia.com/gpu", devices: []string{"0", "GPU-4c1e7d0a-0000-1111-2222-333344445555", "0:1", "all"}},
		"json":            {data: nvidiaJSON, json: true, kind: "nvidia.com/gpu", devices: []string{"MIG-9d0c4a55-aaaa-bbbb-cccc-ddddeeeeffff", "0"}},
		"json as yaml":    {data: otherVendorJSON, kind: "vendor.example/fpga", devices: []string{"fpga0"}},
		"no devices":      {data: "kind: nvidia.com/gpu\n", kind: "nvidia.com/gpu"},
		"no kind":         {data: "devices: [{name: a}]\n", bad: true},
		"nameless device": {data: "kind: nvidia.com/gpu\ndevices: [{}]\n", bad: true},
		"not yaml":        {data: "kind: [\n", bad: true},
		"not json":        {data: "{", json: true, bad: true},
		"kind not string": {data: "kind: {a: b}\n", bad: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			kind, devices, err := parseCDISpec([]byte(tt.data), tt.json)
			if tt.bad {
				if err == nil {
					t.Fatalf("parsed %q %q, want an error", kind, devices)
				}
				return
			}
			if err != nil || kind != tt.kind || !slices.Equal(devices, tt.devices) {
				t.Fatalf("= %q %q %v, want %q %q", kind, devices, err, tt.kind, tt.devices)
			}
		})
	}
}

// FuzzParseCDISpec: spec files are outside input; the decoder must never
// panic, and what it accepts has a kind and only named devices.
func FuzzParseCDISpec(f *testing.F) {
	for _, seed := range []string{nvidiaYAML, nvidiaJSON, otherVendorJSON, "kind: a\n", "{}", "- x\n", "&a [*a]"} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		kind, devices, err := parseCDISpec(data, isJSON)
		if err != nil {
			return
		}
		if kind == "" || slices.Contains(devices, "") {
			t.Fatalf("accepted kind %q devices %q", kind, devices)
		}
	})
}
