package commandapi_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/domain"
)

// TestRegisterImageServicePortsFromLabel: an image registered with its
// labels and no service_ports offers the apps its ai.backend.service-ports
// label declares; explicit service_ports win; a malformed label is a 400
// naming it, and nothing is registered.
func TestRegisterImageServicePortsFromLabel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	type registered struct {
		ID       string `json:"id"`
		Position uint64 `json:"position"`
	}
	type image struct {
		ServicePorts []domain.ServicePort `json:"service_ports"`
		Labels       map[string]string    `json:"labels"`
	}
	register := func(body string) response { return e.do(t, "POST", "/v1/images", adminToken, body) }
	get := func(r response) image {
		t.Helper()
		var reg registered
		r.decode(t, &reg)
		var img image
		e.do(t, "GET", fmt.Sprintf("/v1/images/%s?wait_for_position=%d", reg.ID, reg.Position), adminToken, "").decode(t, &img)
		return img
	}

	r := register(`{"reference":"localhost/cairn/python:latest","labels":{"ai.backend.service-ports":"jupyter:http:8888,tensorboard:http:6006","io.cairn.recipe":"abc"}}`)
	if r.status != http.StatusCreated {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	img := get(r)
	want := []domain.ServicePort{{Name: "jupyter", Protocol: "http", Port: 8888}, {Name: "tensorboard", Protocol: "http", Port: 6006}}
	if !reflect.DeepEqual(img.ServicePorts, want) || img.Labels["io.cairn.recipe"] != "abc" {
		t.Fatalf("from the label: %+v", img)
	}

	r = register(`{"reference":"localhost/cairn/explicit:1","labels":{"ai.backend.service-ports":"jupyter:http:8888"},
		"service_ports":[{"name":"lab","protocol":"http","port":9999}]}`)
	if r.status != http.StatusCreated {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	if img := get(r); !reflect.DeepEqual(img.ServicePorts, []domain.ServicePort{{Name: "lab", Protocol: "http", Port: 9999}}) {
		t.Fatalf("explicit: %+v", img)
	}

	for label, says := range map[string]string{
		"jupyter:http":        "want name:protocol:port",
		"jupyter:http:70000":  "not between 1 and 65535",
		"jupyter:gopher:8888": `unknown protocol \"gopher\"`,
	} {
		r := register(`{"reference":"localhost/cairn/bad:1","labels":{"ai.backend.service-ports":"` + label + `"}}`)
		if r.status != http.StatusBadRequest {
			t.Fatalf("%q: %d %s", label, r.status, r.body)
		}
		if p := r.problem(t); p.Field != "labels.ai.backend.service-ports" || !strings.Contains(string(r.body), says) {
			t.Errorf("%q: %+v, want the field named and %q", label, p, says)
		}
	}
	if r := e.do(t, "GET", "/v1/images/"+imageIDOf("localhost/cairn/bad:1", "x86_64"), adminToken, ""); r.status != http.StatusNotFound {
		t.Fatalf("a refused image was registered: %d %s", r.status, r.body)
	}
}
