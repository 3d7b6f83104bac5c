package httpapi

import (
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// Requests of mixed methods on one kept-alive connection reuse fiber's
// request buffer; the metrics must still name each method as it was and
// the registry must still gather (a label changed behind its back made
// /metrics answer 500).
func TestMetricsMethodLabelsSurviveBufferReuse(t *testing.T) {
	reg := prometheus.NewRegistry()
	app, err := New(Config{BodyLimit: 4096, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	ok := func(c *fiber.Ctx) error { return c.SendString("ok") }
	app.Get("/r", ok)
	app.Delete("/r", ok)
	app.Patch("/r", ok)
	app.Post("/r", ok)
	app.Use(NotFound)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln) //nolint:errcheck // ends at Shutdown
	t.Cleanup(func() { _ = app.Shutdown() })

	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	for range 3 {
		for _, m := range []string{"GET", "DELETE", "PATCH", "GET", "POST", "PUT", "BREW"} {
			req, _ := http.NewRequest(m, "http://"+ln.Addr().String()+"/r", nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather after mixed requests: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range families {
		if f.GetName() != "cairn_http_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" {
					seen[l.GetValue()] = true
				}
			}
		}
	}
	var got []string
	for m := range seen {
		got = append(got, m)
	}
	sort.Strings(got)
	// BREW never reaches the middleware (fiber refuses unknown methods
	// first); it is there to overwrite the buffer with a longer method.
	if want := "DELETE GET PATCH POST PUT"; strings.Join(got, " ") != want {
		t.Fatalf("method labels %v, want %s", got, want)
	}
}
