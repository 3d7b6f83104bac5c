package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// benchPackages lists the packages of this module that pkg (a directory,
// relative to this one) builds in whose import path names a benchmark.
func benchPackages(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var bench []string
	for p := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(p, "github.com/cairnhq/cairn/") && strings.Contains(p, "bench") {
			bench = append(bench, p)
		}
	}
	return bench
}

// TestCairnCarriesNoBenchmarkCode: the production binary builds in no
// benchmark package; they belong to cairn-bench, which does build them
// (so this check sees them when they are there).
func TestCairnCarriesNoBenchmarkCode(t *testing.T) {
	t.Parallel()
	if got := benchPackages(t, "."); len(got) > 0 {
		t.Errorf("cairn builds in benchmark packages: %v", got)
	}
	got := benchPackages(t, "../cairn-bench")
	for _, want := range []string{
		"github.com/cairnhq/cairn/cmd/cairn-bench",
		"github.com/cairnhq/cairn/cmd/cairn-bench/internal/apibench",
		"github.com/cairnhq/cairn/cmd/cairn-bench/internal/schedbench",
		"github.com/cairnhq/cairn/cmd/cairn-bench/internal/storebench",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("cairn-bench does not build in %s (it builds in %v)", want, got)
		}
	}
}
