package apibench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// check renders a target as met (✓) or missed (✗).
func check(met bool) string {
	if met {
		return "✓"
	}
	return "✗"
}

// ms renders a latency in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// targets are the three targets, each with its verdict.
func (r Result) targets() [3]string {
	return [3]string{
		fmt.Sprintf("audit on ≥ %d req/s %s", TargetPerSecond, check(r.On.PerSecond() >= TargetPerSecond)),
		fmt.Sprintf("audit on p99 ≤ %s %s", ms(TargetP99), check(r.On.P99 <= TargetP99)),
		fmt.Sprintf("on/off %.2fx ≥ %.1fx %s", r.Ratio(), TargetRatio, check(r.Ratio() >= TargetRatio)),
	}
}

// Met reports whether every target is met.
func (r Result) Met() bool {
	return r.On.PerSecond() >= TargetPerSecond && r.On.P99 <= TargetP99 && r.Ratio() >= TargetRatio
}

func (s Summary) cells() []any {
	appended, sealed, lag := "", "", ""
	if s.Mode == AuditOn {
		appended, sealed = fmt.Sprintf("%.0f", s.AppendedPerSecond()), fmt.Sprintf("%.0f", s.SealedPerSecond())
		lag = ms(s.MaxLag)
	}
	return []any{s.Mode, s.Rounds, s.Requests, s.PerSecond(), ms(s.P50), ms(s.P99), s.CPUPerRequest().Microseconds(), appended, sealed, lag}
}

// WriteTable prints r as aligned text: a line per mode, the rounds, and
// the targets.
func WriteTable(w io.Writer, r Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODE\tROUNDS\tREQUESTS\tREQ/S\tP50\tP99\tCPU µs/REQ\tRECORDS APPENDED/S\tSEALED/S\tMAX SEAL LAG")
	for _, s := range []Summary{r.On, r.Off} {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%s\t%s\t%d\t%s\t%s\t%s\n", s.cells()...)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUND\tMODE\tREQ/S\tP50\tP99\tAPPENDED\tSEALED DURING\tSEAL LAG")
	for i, rd := range r.Rounds {
		fmt.Fprintf(tw, "%d\t%s\t%.0f\t%s\t%s\t%d\t%d\t%s\n", i/2+1, rd.Mode, rd.PerSecond(), ms(rd.P50), ms(rd.P99), rd.Appended, rd.Sealed, ms(rd.Lag))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	t := r.targets()
	_, err := fmt.Fprintf(w, "\nTargets: %s; %s; %s\n", t[0], t[1], t[2])
	return err
}

// WriteMarkdown writes r as a Markdown section: header (how it was made),
// a row per mode, the targets.
func WriteMarkdown(w io.Writer, r Result, header string) error {
	if _, err := fmt.Fprintf(w, "%s\n\n| mode | rounds | requests | req/s | p50 | p99 | CPU µs/req | records appended/s | sealed/s | max seal lag |\n"+
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", header); err != nil {
		return err
	}
	for _, s := range []Summary{r.On, r.Off} {
		if _, err := fmt.Fprintf(w, "| %s | %d | %d | %.0f | %s | %s | %d | %s | %s | %s |\n", s.cells()...); err != nil {
			return err
		}
	}
	t := r.targets()
	_, err := fmt.Fprintf(w, "\nTargets: %s; %s; %s.\n", t[0], t[1], t[2])
	return err
}
