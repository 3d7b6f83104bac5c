package domain

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseServicePorts(t *testing.T) {
	http := func(name string, port int) ServicePort { return ServicePort{Name: name, Protocol: "http", Port: port} }
	for _, c := range []struct {
		label string
		want  []ServicePort
		// bad is a part of the error's message; "" means the label is valid.
		bad string
	}{
		{label: "", want: []ServicePort{}},
		{label: "  ", want: []ServicePort{}},
		{label: "jupyter:http:8888", want: []ServicePort{http("jupyter", 8888)}},
		{label: "jupyter:http:8888,tensorboard:http:6006,ssh:tcp:2200,web:preopen:[8080]",
			want: []ServicePort{http("jupyter", 8888), http("tensorboard", 6006), {Name: "ssh", Protocol: "tcp", Port: 2200},
				{Name: "web", Protocol: "preopen", Port: 8080}}},
		{label: "jupyter:http:8888, vscode:http:8180", want: []ServicePort{http("jupyter", 8888), http("vscode", 8180)}},
		{label: "ttyd:pty:7681,jupyter:http:8888", want: []ServicePort{http("jupyter", 8888)}}, // pty: skipped
		{label: "jupyter-lab_2:http:1", want: []ServicePort{http("jupyter-lab_2", 1)}},
		{label: "jupyter:http:65535", want: []ServicePort{http("jupyter", 65535)}},
		{label: "jupyter", bad: "want name:protocol:port"},
		{label: "jupyter:http", bad: "want name:protocol:port"},
		{label: "a:http:1:2", bad: "want name:protocol:port"},
		{label: "jupyter:http:8888,", bad: `entry 2 "": want name:protocol:port`},
		{label: ",jupyter:http:8888", bad: `entry 1 "": want name:protocol:port`},
		{label: "jupyter:udp:8888", bad: `unknown protocol "udp"`},
		{label: "desk:vnc:5900", bad: `protocol "vnc" is not supported`},
		{label: "jupyter:http:-1", bad: `the port "-1" is not a number`},
		{label: "jupyter:http:+88", bad: "not a number"},
		{label: "jupyter:http:", bad: "not a number"},
		{label: "jupyter:http:0", bad: "not between 1 and 65535"},
		{label: "jupyter:http:65536", bad: "not between 1 and 65535"},
		{label: "jupyter:http:99999999999999999999", bad: "not a number"},
		{label: "a:tcp:[5000,5005]", bad: "several ports in one entry"},
		{label: "a:tcp:[5000", bad: "no closing"},
		{label: ":http:8888", bad: "the name required"},
		{label: "-x:http:8888", bad: "the name must start with a letter or a digit"},
		{label: "a b:http:8888", bad: "the name may only contain"},
		{label: "a:http:8888,a:tcp:9999", bad: `the name "a" is declared twice`},
		{label: "a:http:8888,b:tcp:8888", bad: "port 8888 is declared twice"},
		{label: strings.Repeat("a:http:1,", maxServicePorts) + "b:http:2", bad: "more than 64 entries"},
	} {
		got, err := ParseServicePorts(c.label)
		if c.bad == "" {
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("%q: %+v, %v; want %+v", c.label, got, err, c.want)
			}
			continue
		}
		var de *Error
		if !errors.As(err, &de) || de.Kind != KindInvalid || de.Field != "labels.ai.backend.service-ports" || !strings.Contains(err.Error(), c.bad) {
			t.Errorf("%q: %v; want an invalid labels.ai.backend.service-ports saying %q", c.label, err, c.bad)
		}
	}
}

// TestParseServicePortsEveryProblem: one error names every bad entry.
func TestParseServicePortsEveryProblem(t *testing.T) {
	_, err := ParseServicePorts("a:udp:1,b:http:0,c:http:3")
	if err == nil || !strings.Contains(err.Error(), `entry 1 "a:udp:1"`) || !strings.Contains(err.Error(), `entry 2 "b:http:0"`) {
		t.Fatalf("%v", err)
	}
}

func TestImageServicePortsFromLabel(t *testing.T) {
	label := func(v string) map[string]string {
		return map[string]string{ServicePortsLabel: v, "org.opencontainers.image.title": "python"}
	}
	fromLabel := []ServicePort{{Name: "jupyter", Protocol: "http", Port: 8888}, {Name: "tensorboard", Protocol: "http", Port: 6006}}
	explicit := []ServicePort{{Name: "notebook", Protocol: "http", Port: 9999}}
	registered := func(labels map[string]string, ports []ServicePort) ImageRegistered {
		return ImageRegistered{Reference: imageRef, Architecture: "x86_64", ImageSpec: ImageSpec{Labels: labels,
			MinResourceSlots: Slots{}, MaxResourceSlots: Slots{}, ServicePorts: ports}, At: at(0)}
	}
	register := func(s ImageSpec) func(*Image) ([]Event, error) {
		return func(i *Image) ([]Event, error) { return i.Register(imageRef, "x86_64", s, at(0)) }
	}
	base := registered(label("jupyter:http:8888"), []ServicePort{fromLabel[0]})
	modify := func(ch ImageChanges) func(*Image) ([]Event, error) {
		return func(i *Image) ([]Event, error) { return i.Modify(ch, at(1)) }
	}
	modified := func(labels map[string]string, ports []ServicePort) ImageModified {
		return ImageModified{ImageSpec: ImageSpec{Labels: labels, MinResourceSlots: Slots{}, MaxResourceSlots: Slots{},
			ServicePorts: ports}, At: at(1)}
	}
	newLabels := label("tensorboard:http:6006,jupyter:http:8888")
	runCases(t, RehydrateImage, []aggCase[*Image]{
		{name: "ports from the label", when: register(ImageSpec{Labels: label("tensorboard:http:6006,jupyter:http:8888")}),
			then: []Event{registered(label("tensorboard:http:6006,jupyter:http:8888"), fromLabel)}},
		{name: "explicit ports win", when: register(ImageSpec{Labels: label("jupyter:http:8888"), ServicePorts: explicit}),
			then: []Event{registered(label("jupyter:http:8888"), explicit)}},
		{name: "explicit ports win over a bad label", when: register(ImageSpec{Labels: label("jupyter:http"), ServicePorts: explicit}),
			then: []Event{registered(label("jupyter:http"), explicit)}},
		{name: "a bad label", when: register(ImageSpec{Labels: label("jupyter:http:88888")}),
			err: ErrInvalid, fields: []string{"labels.ai.backend.service-ports"}},
		{name: "new labels set the ports", given: []Event{base}, when: modify(ImageChanges{Labels: &newLabels}),
			then: []Event{modified(newLabels, fromLabel)}},
		{name: "new labels with ports of their own", given: []Event{base},
			when: modify(ImageChanges{Labels: &newLabels, ServicePorts: &explicit}), then: []Event{modified(newLabels, explicit)}},
		{name: "new labels with a bad label", given: []Event{base}, when: modify(ImageChanges{Labels: &map[string]string{ServicePortsLabel: "x"}}),
			err: ErrInvalid, fields: []string{"labels.ai.backend.service-ports"}},
		{name: "other changes keep the ports", given: []Event{base}, when: modify(ImageChanges{MaxResourceSlots: &Slots{SlotCPU: Units(2)}}),
			then: []Event{ImageModified{ImageSpec: ImageSpec{Labels: label("jupyter:http:8888"), MinResourceSlots: Slots{},
				MaxResourceSlots: Slots{SlotCPU: Units(2)}, ServicePorts: []ServicePort{fromLabel[0]}}, At: at(1)}}},
	})
}

// FuzzParseServicePorts: whatever an image's label says, parsing does not
// panic; what it accepts are valid, distinct ports that register, and it
// parses the same when printed back; what it refuses is KindInvalid naming
// the label.
func FuzzParseServicePorts(f *testing.F) {
	for _, s := range []string{"jupyter:http:8888", "a:tcp:[1],b:preopen:2", "x:pty:7681", "a:tcp:[5000,5005]", "a:http:8888,",
		"a::", "[,]:[:]", "jupyter:http:8888, vscode:http:8180"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, label string) {
		ports, err := ParseServicePorts(label)
		if err != nil {
			var de *Error
			if !errors.As(err, &de) || de.Kind != KindInvalid || de.Field != servicePortsField {
				t.Fatalf("%q: %v", label, err)
			}
			return
		}
		var entries []string
		for _, sp := range ports {
			entries = append(entries, sp.Name+":"+sp.Protocol+":"+strconv.Itoa(sp.Port))
		}
		again, err := ParseServicePorts(strings.Join(entries, ","))
		if err != nil || !reflect.DeepEqual(again, ports) {
			t.Fatalf("%q: printed back %v parses to %v, %v", label, entries, again, err)
		}
		var i Image
		if _, err := i.Register(imageRef, "x86_64", ImageSpec{ServicePorts: ports}, at(0)); err != nil {
			t.Fatalf("%q: ports %+v do not register: %v", label, ports, err)
		}
	})
}
