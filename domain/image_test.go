package domain

import (
	"strings"
	"testing"
	"unicode"
)

func TestImage(t *testing.T) {
	base := imageRegistered()
	spec := ImageSpec{Labels: map[string]string{"ai.backend.kernelspec": "1"}, MinResourceSlots: Slots{SlotCPU: Units(1)},
		ServicePorts: []ServicePort{{Name: "jupyter", Protocol: "http", Port: 8080}}}
	register := func(ref, arch string, s ImageSpec) func(*Image) ([]Event, error) {
		return func(i *Image) ([]Event, error) { return i.Register(ref, arch, s, at(0)) }
	}
	forgotten := ImageForgotten{At: at(2)}
	runCases(t, RehydrateImage, []aggCase[*Image]{
		{
			name: "registered",
			when: register(imageRef, "x86_64", spec),
			then: []Event{base},
			check: func(t *testing.T, i *Image) {
				if !i.Exists() || i.Reference() != imageRef || i.Architecture() != "x86_64" || len(i.Spec().ServicePorts) != 1 {
					t.Fatalf("%+v", i)
				}
			},
		},
		{name: "registered twice", given: []Event{base}, when: register(imageRef, "x86_64", spec), err: ErrConflict},
		{
			name: "every problem at once",
			when: register("pytorch", "X86", ImageSpec{
				Labels:           map[string]string{"": "x"},
				MinResourceSlots: Slots{SlotCPU: Units(4)}, MaxResourceSlots: Slots{SlotCPU: Units(2), "tpu": 1},
				ServicePorts: []ServicePort{{Name: "a", Protocol: "http", Port: 80}, {Name: "a", Protocol: "udp", Port: 80},
					{Name: "b", Protocol: "tcp", Port: 70000}},
			}),
			err: ErrInvalid,
			fields: []string{"reference", "architecture", "labels", "min_resource_slots.cpu", "max_resource_slots.tpu",
				"service_ports.a", "service_ports.b"},
		},
		{
			name:  "new labels",
			given: []Event{base},
			when: func(i *Image) ([]Event, error) {
				return i.Modify(ImageChanges{MaxResourceSlots: &Slots{SlotCUDAShares: Units(1)}}, at(1))
			},
			then: []Event{func() ImageModified {
				s := base.ImageSpec.clone()
				s.MaxResourceSlots = Slots{SlotCUDAShares: Units(1)}
				return ImageModified{ImageSpec: s, At: at(1)}
			}()},
		},
		{name: "the same labels", given: []Event{base}, when: func(i *Image) ([]Event, error) {
			return i.Modify(ImageChanges{ServicePorts: &[]ServicePort{{Name: "jupyter", Protocol: "http", Port: 8080}}}, at(1))
		}},
		{name: "forgotten", given: []Event{base}, when: func(i *Image) ([]Event, error) { return i.Forget(at(2)) }, then: []Event{forgotten},
			check: func(t *testing.T, i *Image) {
				if i.Exists() || !i.Forgotten() {
					t.Fatalf("%+v", i)
				}
			}},
		{name: "forgotten twice", given: []Event{base, forgotten}, when: func(i *Image) ([]Event, error) { return i.Forget(at(3)) }},
		{name: "forgetting an unknown image", when: func(i *Image) ([]Event, error) { return i.Forget(at(3)) }, err: ErrNotFound},
		{name: "modifying a forgotten image", given: []Event{base, forgotten}, when: func(i *Image) ([]Event, error) { return i.Modify(ImageChanges{}, at(3)) }, err: ErrNotFound},
		{name: "registered again after being forgotten", given: []Event{base, forgotten}, when: register(imageRef, "x86_64", ImageSpec{}),
			then: []Event{ImageRegistered{Reference: imageRef, Architecture: "x86_64", ImageSpec: ImageSpec{Labels: map[string]string{},
				MinResourceSlots: Slots{}, MaxResourceSlots: Slots{}, ServicePorts: []ServicePort{}}, At: at(0)}},
			check: func(t *testing.T, i *Image) {
				if !i.Exists() || i.Forgotten() {
					t.Fatalf("%+v", i)
				}
			}},
	})
}

func TestCheckImageReference(t *testing.T) {
	for ref, ok := range map[string]bool{
		"cr.example.com/pytorch:2.4":               true,
		"localhost/busybox:latest":                 true,
		"registry:5000/team/app:v1":                true,
		"cr.io/app@sha256:abcdef":                  true,
		"cr.io/app:1@sha256:abcdef":                true,
		"pytorch:2.4":                              false, // no registry
		"library/pytorch:2.4":                      false, // not a host
		"cr.io/pytorch":                            false, // no tag
		"cr.io/PyTorch:1":                          false, // upper case
		"cr.io/pytorch:":                           false,
		"cr.io//x:1":                               false,
		"cr.io/x@sha256":                           false,
		"cr.io/x y:1":                              false,
		"cr.io/" + strings.Repeat("a", 200) + ":1": false,
		"": false,
	} {
		if err := CheckImageReference("t", "reference", ref); (err == nil) != ok {
			t.Errorf("%q: err = %v, want ok %v", ref, err, ok)
		}
	}
	if NormalizeArchitecture("amd64") != "x86_64" || NormalizeArchitecture("arm64") != "aarch64" || NormalizeArchitecture("riscv64") != "riscv64" {
		t.Fatal("NormalizeArchitecture")
	}
}

// FuzzCheckImageReference: whatever an admin sends, the check does not
// panic, and what it accepts fits in a stream name and names a registry.
func FuzzCheckImageReference(f *testing.F) {
	for _, s := range []string{"cr.io/a:1", "localhost/a@sha256:1", "a", "cr.io/a:b:c", "x.y/\x00:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		err := CheckImageReference("t", "reference", ref)
		if err == nil {
			if len(ref) > MaxImageReferenceLength || !strings.Contains(ref, "/") || strings.IndexFunc(ref, unicode.IsSpace) >= 0 {
				t.Fatalf("accepted %q", ref)
			}
		} else if KindOf(err) != KindInvalid {
			t.Fatalf("%q: kind %v", ref, KindOf(err))
		}
	})
}
