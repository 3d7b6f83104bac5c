package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/pgtest"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// An image's service port and a session's pre-opened port are published
// by the local agent and shown under the session's kernel by
// GET /v1/sessions/{id}, on either store (read model).
func TestServicePortsOnEitherStore(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	// One after the other: both local agents take host ports from the
	// same default range.
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			var extra []string
			if backend == "postgres" {
				url, schema := pgtest.Schema(t)
				sep := "?"
				if strings.Contains(url, "?") {
					sep = "&"
				}
				extra = append(extra, "--store", url+sep+"schema="+schema)
			}
			d := startDev(t, uri, extra...)

			// The base image declares an app on 8080 (an operator's PATCH).
			var images struct {
				Items []struct {
					ID        string `json:"id"`
					Reference string `json:"reference"`
				} `json:"items"`
			}
			d.call("GET", "/v1/images", nil, http.StatusOK, &images)
			id := ""
			for _, img := range images.Items {
				if img.Reference == podmantest.DefaultImage {
					id = img.ID
				}
			}
			if id == "" {
				t.Fatalf("%s is not registered: %+v", podmantest.DefaultImage, images)
			}
			d.call("PATCH", "/v1/images/"+id, map[string]any{
				"service_ports": []map[string]any{{"name": "web", "protocol": "http", "port": 8080}},
			}, http.StatusOK, nil)

			c := d.create(map[string]any{
				"command":       "sh -c 'mkdir -p /www && echo served > /www/index.html && exec busybox httpd -f -p 8080 -h /www'",
				"resources":     map[string]any{"cpu": 1, "mem": "64m"},
				"preopen_ports": []int{9000},
			})
			d.awaitStatus(c.ID, c.Position, "RUNNING")
			var s struct {
				Kernels []struct {
					ServicePorts []struct {
						Name          string `json:"name"`
						Protocol      string `json:"protocol"`
						ContainerPort int    `json:"container_port"`
						HostPort      int    `json:"host_port"`
					} `json:"service_ports"`
				} `json:"kernels"`
			}
			d.call("GET", "/v1/sessions/"+c.ID, nil, http.StatusOK, &s)
			if len(s.Kernels) != 1 || len(s.Kernels[0].ServicePorts) != 2 {
				t.Fatalf("kernels %+v: want one with two service ports", s.Kernels)
			}
			ports := s.Kernels[0].ServicePorts
			if p := ports[0]; p.Name != "web" || p.Protocol != "http" || p.ContainerPort != 8080 || p.HostPort < 1 {
				t.Errorf("image's port %+v", p)
			}
			if p := ports[1]; p.Name != "port-9000" || p.Protocol != "preopen" || p.ContainerPort != 9000 || p.HostPort < 1 || p.HostPort == ports[0].HostPort {
				t.Errorf("pre-opened port %+v", p)
			}
			// The host port is the app's, on the agent's loopback.
			var body string
			answers := func() bool {
				res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/index.html", ports[0].HostPort))
				if err != nil {
					return false
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				body = string(b)
				return res.StatusCode == http.StatusOK
			}
			await.Until(t, waitTimeout, "the app on its host port", answers)
			if body != "served\n" {
				t.Errorf("the app answered %q", body)
			}
			d.awaitStatus(c.ID, d.terminate(c.ID), "TERMINATED")
		})
	}
}
