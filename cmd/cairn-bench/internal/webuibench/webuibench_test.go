package webuibench

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/browsertest"
	"github.com/cairnhq/cairn/infra/images"
)

// TestRunTiny runs the whole benchmark at tiny sizes (two of them, so the
// append-and-restart path runs twice) in Chromium, so that the harness
// cannot rot: every page is measured, the queries per load are the same
// at both sizes, every change reaches the page and the bare stream, and
// the report is written.
func TestRunTiny(t *testing.T) {
	tools := browsertest.Require(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cfg := Config{
		Sizes: []Size{{Sessions: 200, Folders: 20}, {Sessions: 400, Folders: 40}},
		Loads: 3, Warmup: 1, Changes: 3,
		Tools: tools, Timeout: 5 * time.Minute, Image: images.BaseImage, Quiet: time.Second,
	}
	res, err := Run(ctx, ServerConfig{DataDir: t.TempDir()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sizes) != 2 {
		t.Fatalf("%d sizes measured, want 2", len(res.Sizes))
	}
	for _, sr := range res.Sizes {
		if len(sr.Pages) != len(pagePaths) {
			t.Fatalf("%s: %d pages measured, want %d", sr.Size, len(sr.Pages), len(pagePaths))
		}
		for _, p := range sr.Pages {
			if len(p.Painted) != cfg.Loads || slices.Min(p.Painted) <= 0 || slices.Min(p.DOM) <= 0 {
				t.Errorf("%s %s: load times %v (rows in DOM %v), want %d positive ones", sr.Size, p.Path, p.Painted, p.DOM, cfg.Loads)
			}
			for i := range p.Painted {
				if p.Painted[i] < p.DOM[i] {
					t.Errorf("%s %s: painted %v before the rows were in the DOM %v", sr.Size, p.Path, p.Painted[i], p.DOM[i])
				}
			}
			list := "GET /v1" + strings.Replace(p.Path, "/data", "/vfolders", 1)
			for i, reqs := range p.Requests {
				if !slices.Contains(reqs, list) {
					t.Errorf("%s %s load %d: requests %v, want %s among them", sr.Size, p.Path, i, reqs, list)
				}
			}
			if slices.Min(p.Queries) < 1 {
				t.Errorf("%s %s: read-model queries per load %v, want at least one (the list)", sr.Size, p.Path, p.Queries)
			}
		}
		if len(sr.SSEPage) != cfg.Changes || len(sr.SSEBare) != cfg.Changes {
			t.Errorf("%s: %d and %d SSE samples, want %d each", sr.Size, len(sr.SSEPage), len(sr.SSEBare), cfg.Changes)
		}
	}
	for i, p := range res.Sizes[1].Pages {
		small := res.Sizes[0].Pages[i]
		if spread(p.Queries) != spread(small.Queries) || spread(counts(p.Requests)) != spread(counts(small.Requests)) {
			t.Errorf("%s: %s requests and %s queries per load at %s, %s and %s at %s: the page's cost grows with the store",
				p.Path, spread(counts(p.Requests)), spread(p.Queries), res.Sizes[1].Size,
				spread(counts(small.Requests)), spread(small.Queries), res.Sizes[0].Size)
		}
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, res, "## header"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## header", "| /sessions | 200 sessions, 20 folders | 3 |", "| /data | 400 sessions, 40 folders | 3 |", "| the Sessions page (row shown) |", "| a bare EventSource (event received) |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, md.String())
		}
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	t.Parallel()
	var v []time.Duration
	for i := 20; i >= 1; i-- {
		v = append(v, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 10 * time.Millisecond}, {95, 19 * time.Millisecond}, {99, 20 * time.Millisecond}, {100, 20 * time.Millisecond}} {
		if got := Percentile(v, tc.p); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("p50 of nothing = %v", got)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := Config{Sizes: DefaultSizes, Loads: 1, Image: images.BaseImage}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config refused: %v", err)
	}
	bad := Config{Sizes: []Size{{Sessions: 10, Folders: 10}, {Sessions: 5, Folders: 0}}, Warmup: -1}
	err := bad.Validate()
	for _, want := range []string{"must grow", "at least one session and one folder", "loads 0", "negative", "no image"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
}
