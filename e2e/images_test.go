package e2e

import (
	"net/http"
	"slices"
	"testing"

	"github.com/cairnhq/cairn/infra/podmantest"
)

// TestDevRegistersLocalImagesWithTheirServicePorts: `cairn dev` registers
// the python image that Podman has, with the service ports its label
// declares, and a session of it runs its command (Python and numpy, as
// the agent runs kernels).
func TestDevRegistersLocalImagesWithTheirServicePorts(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	python := podmantest.Python(t, uri)
	d := startDev(t, uri)

	type servicePort struct {
		Name     string `json:"name"`
		Protocol string `json:"protocol"`
		Port     int    `json:"port"`
	}
	type image struct {
		Reference    string            `json:"reference"`
		Architecture string            `json:"architecture"`
		Labels       map[string]string `json:"labels"`
		ServicePorts []servicePort     `json:"service_ports"`
	}
	var list struct {
		Items []image `json:"items"`
	}
	d.call("GET", "/v1/images", nil, http.StatusOK, &list)
	i := slices.IndexFunc(list.Items, func(img image) bool { return img.Reference == python })
	if i < 0 {
		t.Fatalf("%s is not registered: %+v", python, list.Items)
	}
	if got := list.Items[i]; !slices.Equal(got.ServicePorts, []servicePort{{"jupyter", "http", 8888}}) || got.Labels["io.cairn.recipe"] == "" {
		t.Fatalf("%s is registered as %+v", python, got)
	}

	c := d.create(map[string]any{
		"image":     python,
		"type":      "batch",
		"command":   "python3 -c 'import numpy; print(int(numpy.int64(6) * 7))'",
		"resources": map[string]any{"cpu": 1, "mem": "512m"},
	})
	if s := d.await(c.ID, c.Position, "the batch to end", func(s session) bool { return terminal(s.Status) }); s.Result != "success" {
		t.Fatalf("the batch ended as %s", s)
	}
	d.awaitLogs(c.ID, "42")
}
