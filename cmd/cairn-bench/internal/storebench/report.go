package storebench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Target is an issue's goal for one scenario, checked in the report.
type Target struct {
	Description string
	Met         func(r Result) bool
}

// TargetFor returns the target that applies to r, if any.
func TargetFor(r Result, writers int) (Target, bool) {
	switch {
	case r.Backend == "postgres" && r.Scenario == fmt.Sprintf("append, %d writers x 1 event", writers):
		return Target{"≥ 0.7x raw", func(r Result) bool { return r.Ratio() >= 0.7 }}, true
	case strings.HasPrefix(r.Scenario, "replay"):
		return Target{"≥ 300k events/s", func(r Result) bool { return r.Cairn >= 300_000 }}, true
	case strings.HasPrefix(r.Scenario, "subscription lag p99"):
		return Target{"≤ 50 ms", func(r Result) bool { return r.Cairn <= 50 }}, true
	}
	return Target{}, false
}

func format(v float64, unit string) string {
	if unit == "ms" {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func targetCell(r Result, writers int) string {
	t, ok := TargetFor(r, writers)
	if !ok {
		return ""
	}
	if t.Met(r) {
		return t.Description + " ✓"
	}
	return t.Description + " ✗"
}

// WriteTable prints results as an aligned text table.
func WriteTable(w io.Writer, results []Result, writers int) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tSCENARIO\tUNIT\tCAIRN\tRAW BASELINE\tRATIO\tTARGET")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.2fx\t%s\n", r.Backend, r.Scenario, r.Unit, format(r.Cairn, r.Unit), format(r.Raw, r.Unit), r.Ratio(), targetCell(r, writers))
	}
	return tw.Flush()
}

// WriteMarkdown writes results as a Markdown table with a header saying how
// they were made.
func WriteMarkdown(w io.Writer, results []Result, writers int, header string) error {
	if _, err := fmt.Fprintf(w, "%s\n\n| backend | scenario | unit | Cairn | raw baseline | ratio | target |\n|---|---|---|---:|---:|---:|---|\n", header); err != nil {
		return err
	}
	for _, r := range results {
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.2fx | %s |\n", r.Backend, r.Scenario, r.Unit, format(r.Cairn, r.Unit), format(r.Raw, r.Unit), r.Ratio(), targetCell(r, writers)); err != nil {
			return err
		}
	}
	return nil
}
