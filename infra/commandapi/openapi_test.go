package commandapi_test

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// openAPIPath is the API reference, kept in sync with the routes by
// TestOpenAPIListsEveryRoute.
const openAPIPath = "../../docs/api/openapi.yaml"

var fiberParam = regexp.MustCompile(`:([A-Za-z_][A-Za-z0-9_]*)`)

// Every route Mount registers is documented, and every documented
// operation is a route.
func TestOpenAPIListsEveryRoute(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(openAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                          `yaml:"openapi"`
		Paths   map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", openAPIPath, err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("%s: openapi %q", openAPIPath, doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths {
		for key := range item {
			switch key {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				documented[strings.ToUpper(key)+" "+path] = true
			}
		}
	}

	e := newEnv(t, envOptions{})
	registered := map[string]bool{}
	routes := e.app.GetRoutes(true)
	gets := map[string]bool{}
	for _, r := range routes {
		if r.Method == "GET" {
			gets[r.Path] = true
		}
	}
	for _, r := range routes {
		// HEAD is registered with every GET (the document says so once),
		// and documented where it is a route of its own (tus); the
		// catch-all NotFound is not a route.
		if !strings.HasPrefix(r.Path, "/v1/") || (r.Method == "HEAD" && gets[r.Path]) {
			continue
		}
		registered[r.Method+" "+fiberParam.ReplaceAllString(r.Path, "{$1}")] = true
	}
	if len(registered) == 0 {
		t.Fatal("Mount registered no route")
	}
	for _, op := range sorted(registered) {
		if !documented[op] {
			t.Errorf("%s is registered but not in %s", op, openAPIPath)
		}
	}
	for _, op := range sorted(documented) {
		if !registered[op] {
			t.Errorf("%s is in %s but not registered", op, openAPIPath)
		}
	}
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
