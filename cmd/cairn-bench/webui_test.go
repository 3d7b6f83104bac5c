package main

import (
	"strings"
	"testing"

	"github.com/cairnhq/cairn/cmd/cairn-bench/internal/webuibench"
)

func TestParseSizes(t *testing.T) {
	t.Parallel()
	got, err := parseSizes([]string{"1000:100", "100000:10000"})
	if err != nil {
		t.Fatal(err)
	}
	want := []webuibench.Size{{Sessions: 1000, Folders: 100}, {Sessions: 100000, Folders: 10000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("parseSizes = %v, want %v", got, want)
	}
	_, err = parseSizes([]string{"10", "x:1", "1:2"})
	for _, bad := range []string{`"10"`, `"x:1"`} {
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("parseSizes error %v, want it to name %s", err, bad)
		}
	}
}
