package webuibench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Issue #19's targets.
const (
	TargetPageP95 = 300 * time.Millisecond
	TargetSSEP99  = 250 * time.Millisecond
)

// WriteTable writes the results as plain text tables.
func WriteTable(w io.Writer, res Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "page\tstore\tloads\tp50\tp95\tmax\tDOM p95\tp50 HTML / script / API\tAPI requests/load\tqueries/load")
	for _, sr := range res.Sizes {
		for _, p := range sr.Pages {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Path, sr.Size, len(p.Painted),
				msText(Percentile(p.Painted, 50)), msText(Percentile(p.Painted, 95)), msText(Percentile(p.Painted, 100)),
				msText(Percentile(p.DOM, 95)), p.breakdown(), spread(counts(p.Requests)), spread(p.Queries))
		}
	}
	fmt.Fprintln(tw, "\nSSE delivery\tstore\tchanges\tp50\tp99\tmax")
	for _, sr := range res.Sizes {
		for _, s := range sr.sse() {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", s.name, sr.Size, len(s.samples),
				msText(Percentile(s.samples, 50)), msText(Percentile(s.samples, 99)), msText(Percentile(s.samples, 100)))
		}
	}
	fmt.Fprintln(tw)
	for _, sr := range res.Sizes {
		fmt.Fprintf(tw, "server CPU during the browser run at %s: %s of %s wall (%.0f%% of one core)\n", sr.Size,
			sr.ServerCPU.Round(time.Millisecond), sr.Wall.Round(time.Millisecond), 100*sr.ServerCPU.Seconds()/max(sr.Wall.Seconds(), 1e-9))
	}
	return tw.Flush()
}

// WriteMarkdown writes header and the results as Markdown tables, with
// the targets and whether they are met.
func WriteMarkdown(w io.Writer, res Result, header string) error {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("\n\n| page | store | loads | p50 | p95 | max | rows in DOM p95 | p50: HTML / script / last API answer | API requests per load | read-model queries per load | p95 / smallest store's | target p95 ≤ 300 ms |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, sr := range res.Sizes {
		for i, p := range sr.Pages {
			base := res.Sizes[0].Pages[i]
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p.Path, sr.Size, len(p.Painted),
				msText(Percentile(p.Painted, 50)), msText(Percentile(p.Painted, 95)), msText(Percentile(p.Painted, 100)),
				msText(Percentile(p.DOM, 95)), p.breakdown(), spread(counts(p.Requests)), spread(p.Queries),
				ratio(Percentile(p.Painted, 95), Percentile(base.Painted, 95)), mark(Percentile(p.Painted, 95) <= TargetPageP95))
		}
	}
	b.WriteString("\n| SSE delivery to | store | changes | p50 | p99 | max | target p99 ≤ 250 ms (the page) |\n|---|---|---:|---:|---:|---:|---|\n")
	for _, sr := range res.Sizes {
		for i, s := range sr.sse() {
			target := "baseline"
			if i == 0 {
				target = mark(Percentile(s.samples, 99) <= TargetSSEP99)
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s |\n", s.name, sr.Size, len(s.samples),
				msText(Percentile(s.samples, 50)), msText(Percentile(s.samples, 99)), msText(Percentile(s.samples, 100)), target)
		}
	}
	b.WriteString("\n")
	if last := res.Sizes[len(res.Sizes)-1]; len(last.Pages) > 0 {
		for _, p := range last.Pages {
			if len(p.Requests) > 0 {
				fmt.Fprintf(&b, "API requests of one load of %s: %s.\n", p.Path, "`"+strings.Join(p.Requests[0], "`, `")+"`")
			}
		}
	}
	for _, sr := range res.Sizes {
		fmt.Fprintf(&b, "At %s: seeding took %s; the server's process used %s of CPU during the %s of the browser run (%.0f%% of one core).\n",
			sr.Size, sr.Seeding.Round(time.Second), sr.ServerCPU.Round(time.Millisecond), sr.Wall.Round(time.Second), 100*sr.ServerCPU.Seconds()/max(sr.Wall.Seconds(), 1e-9))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// breakdown is the p50s of the document, the script and the last API
// answer, in ms.
func (p PageResult) breakdown() string {
	v := func(d []time.Duration) string {
		return fmt.Sprintf("%.0f", float64(Percentile(d, 50))/float64(time.Millisecond))
	}
	return v(p.HTML) + " / " + v(p.Script) + " / " + v(p.API) + " ms"
}

type series struct {
	name    string
	samples []time.Duration
}

func (sr SizeResult) sse() []series {
	return []series{{"the Sessions page (row shown)", sr.SSEPage}, {"a bare EventSource (event received)", sr.SSEBare}}
}

// counts are the lengths of lists.
func counts(lists [][]string) []int {
	out := make([]int, len(lists))
	for i, l := range lists {
		out[i] = len(l)
	}
	return out
}

// spread is "n" when every value is n, "min–max" otherwise.
func spread(v []int) string {
	if len(v) == 0 {
		return "-"
	}
	lo, hi := slices.Min(v), slices.Max(v)
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func msText(d time.Duration) string {
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

func ratio(a, b time.Duration) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(a)/float64(b))
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}
