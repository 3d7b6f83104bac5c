package archtest

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTheModuleKeepsTheLayerRule lists every package of the module with
// `go list` (the build tags come from GOFLAGS, which the Makefile exports)
// and fails naming every import that breaks the rule.
func TestTheModuleKeepsTheLayerRule(t *testing.T) {
	root := strings.TrimSpace(goCmd(t, "", "env", "GOMOD"))
	if root == "" || root == "/dev/null" {
		t.Fatal("not inside the module")
	}
	dir := filepath.Dir(root)
	module := strings.TrimSpace(goCmd(t, dir, "list", "-m"))
	out := goCmd(t, dir, "list", "-e", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{with .Error}}{{.Err}}{{end}}", "./...")
	var pkgs []Package
	for line := range strings.Lines(out) {
		path, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		imports, listErr, _ := strings.Cut(rest, "\t")
		if listErr != "" {
			t.Errorf("go list %s: %s", path, listErr)
		}
		pkgs = append(pkgs, Package{Path: path, Imports: strings.Fields(imports)})
	}
	// A listing that lost the module's packages would pass vacuously.
	for _, want := range []string{"domain", "eventstore", "commands", "projections", "readapi", "infra/commandapi", "cmd/cairn"} {
		if !slices.ContainsFunc(pkgs, func(p Package) bool { return p.Path == module+"/"+want }) {
			t.Fatalf("go list did not list %s/%s (%d packages)", module, want, len(pkgs))
		}
	}
	for _, msg := range Check(module, pkgs) {
		t.Error(msg)
	}
}

// TestTheQuerySideLinksNoWriteSide: readapi reaches neither commands nor
// infra/commandapi through any path (an adapter it imports could carry
// them in, as the access log once did).
func TestTheQuerySideLinksNoWriteSide(t *testing.T) {
	root := strings.TrimSpace(goCmd(t, "", "env", "GOMOD"))
	dir := filepath.Dir(root)
	module := strings.TrimSpace(goCmd(t, dir, "list", "-m"))
	deps := strings.Fields(goCmd(t, dir, "list", "-deps", "./readapi/..."))
	if !slices.Contains(deps, module+"/readapi") {
		t.Fatalf("go list -deps did not list readapi (%d packages)", len(deps))
	}
	if linked := LinkedWriteSide(module, deps); len(linked) > 0 {
		t.Errorf("readapi links the write side: %v", linked)
	}
	// The check itself sees a write-side package when one is there.
	if got := LinkedWriteSide(module, []string{module + "/readapi", module + "/commands/quotas", module + "/infra/commandapi", "fmt"}); !slices.Equal(got, []string{"commands/quotas", "infra/commandapi"}) {
		t.Errorf("LinkedWriteSide = %v", got)
	}
}

func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// TestCheckReportsEveryBrokenRule feeds Check a made-up module whose
// packages break each rule once, and one whose packages keep them all.
func TestCheckReportsEveryBrokenRule(t *testing.T) {
	const m = "example.com/cairn"
	pkg := func(path string, imports ...string) Package {
		p := Package{Path: m + "/" + path}
		for _, imp := range imports {
			if !strings.Contains(imp, ".") {
				imp = m + "/" + imp
			}
			p.Imports = append(p.Imports, imp)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pkg  Package
		want string // the message Check must give; "" when none
	}{
		{"domain imports commands", pkg("domain", "commands"), "domain imports commands: domain imports only domain"},
		{"domain imports the eventstore port", pkg("domain/quota", "eventstore"), "domain/quota imports eventstore: domain imports only domain"},
		{"domain imports its own packages", pkg("domain", "domain/audit", "github.com/google/uuid"), ""},
		{"eventstore imports projections", pkg("eventstore/sqlite", "projections"), "eventstore/sqlite imports projections: eventstore imports only domain and eventstore"},
		{"eventstore imports domain and its backends", pkg("eventstore/dsn", "domain", "eventstore/sqlite"), ""},
		{"commands imports infra", pkg("commands/forwarder", "infra/bus"), "commands/forwarder imports infra/bus: commands imports nothing from readapi, agents or infra"},
		{"commands imports agents", pkg("commands/reports", "agents/protocol"), "commands/reports imports agents/protocol: commands imports nothing from readapi, agents or infra"},
		{"commands imports readapi", pkg("commands", "readapi"), "commands imports readapi: commands imports nothing from readapi, agents or infra"},
		{"commands imports a store backend", pkg("commands/scheduler", "eventstore/sqlite"), "commands/scheduler imports eventstore/sqlite: commands uses the eventstore port, never a backend"},
		{"commands imports projections", pkg("commands/scheduler", "projections/sessions"), "commands/scheduler imports projections/sessions: commands and projections do not import each other"},
		{"commands test harness imports infra", pkg("commands/internal/managertest", "infra/bus/bustest"), "commands/internal/managertest imports infra/bus/bustest: commands imports nothing from readapi, agents or infra"},
		{"commands imports the port", pkg("commands/quotas", "eventstore", "domain/quota", "commands"), ""},
		{"projections imports a store backend", pkg("projections", "eventstore/postgres"), "projections imports eventstore/postgres: projections uses the eventstore port, never a backend"},
		{"projections imports commands", pkg("projections/projectiontest", "commands"), "projections/projectiontest imports commands: commands and projections do not import each other"},
		{"projections imports infra", pkg("projections/projectiontest", "infra/pgtest"), "projections/projectiontest imports infra/pgtest: projections imports nothing from readapi, agents or infra"},
		{"projections imports a folder in no layer", pkg("projections", "tools/x"), "projections imports tools/x: projections imports nothing from readapi, agents or infra"},
		{"readapi imports commands", pkg("readapi", "commands"), "readapi imports commands: readapi is the query side and does not import the write side"},
		{"readapi imports the command endpoints", pkg("readapi", "infra/commandapi"), "readapi imports infra/commandapi: readapi is the query side and does not import the write side"},
		{"readapi imports the read side and infra", pkg("readapi", "projections/sessions", "infra/httpapi", "domain"), ""},
		{"infra imports cmd", pkg("infra/devserver", "cmd/cairn"), "infra/devserver imports cmd/cairn: nothing imports cmd"},
		{"agents imports cmd", pkg("agents/node", "cmd/cairn"), "agents/node imports cmd/cairn: nothing imports cmd"},
		{"commands imports cmd", pkg("commands", "cmd/cairn"), "commands imports cmd/cairn: nothing imports cmd"},
		{"the write side's port imports commands", pkg("infra/commandapi", "commands", "readapi"), ""},
		{"cmd imports everything", pkg("cmd/cairn", "infra/devserver", "commands", "eventstore/sqlite", "cmd/cairn/internal/x"), ""},
		{"a package in no layer", pkg("tools/gen", "domain"), "tools/gen: the package is in no layer"},
		{"a benchmark in commands", pkg("commands/scheduler/schedbench", "projections"), "commands/scheduler/schedbench imports projections: commands and projections do not import each other"},
		{"a package of another module", Package{Path: "example.org/other", Imports: []string{m + "/cmd/cairn"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(m, []Package{tc.pkg})
			var want []string
			if tc.want != "" {
				want = []string{tc.want}
			}
			if !slices.Equal(got, want) {
				t.Errorf("Check = %q, want %q", got, want)
			}
		})
	}
}

// TestCheckReportsEveryImportOfAGraph: all the breaks of a graph are
// reported, not only the first.
func TestCheckReportsEveryImportOfAGraph(t *testing.T) {
	const m = "example.com/cairn"
	got := Check(m, []Package{
		{Path: m + "/domain", Imports: []string{m + "/eventstore", m + "/commands"}},
		{Path: m + "/projections", Imports: []string{m + "/eventstore", m + "/eventstore/sqlite", m + "/infra/readmodels"}},
	})
	want := []string{
		"domain imports eventstore: domain imports only domain",
		"domain imports commands: domain imports only domain",
		"projections imports eventstore/sqlite: projections uses the eventstore port, never a backend",
		"projections imports infra/readmodels: projections imports nothing from readapi, agents or infra",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Check =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
