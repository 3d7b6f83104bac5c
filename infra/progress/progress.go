// Package progress shows how far a long operation (a projection rebuild, an
// audit replay, an import) has come: a bar with a rate and an ETA when the
// output is a terminal (vbauerster/mpb), a structured log line every few
// seconds otherwise (CI logs, journald), so that nobody stares at a silent
// command.
package progress

import (
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

// DefaultLogEvery is how often a Reporter that is not on a terminal logs.
const DefaultLogEvery = 2 * time.Second

// Reporter reports one operation's progress. Update and Finish may be
// called from any goroutine; Finish must be called once at the end.
type Reporter struct {
	name   string
	unit   string
	logger *slog.Logger
	every  time.Duration

	mu       sync.Mutex
	done     uint64
	total    uint64
	lastLog  time.Time
	started  time.Time
	finished bool

	container *mpb.Progress
	bar       *mpb.Bar
}

// Options configure a Reporter.
type Options struct {
	// Output is where the bar is drawn (default os.Stderr). The bar is
	// drawn only when it is a terminal.
	Output io.Writer
	// Logger receives the log lines when Output is not a terminal (default
	// slog.Default()).
	Logger *slog.Logger
	// Unit names what is counted (default "events").
	Unit string
	// LogEvery is the time between two log lines (default DefaultLogEvery).
	LogEvery time.Duration
	// ForceBar draws the bar even when Output is not a terminal.
	ForceBar bool
}

// New starts reporting the operation name.
func New(name string, opts Options) *Reporter {
	if opts.Output == nil {
		opts.Output = os.Stderr
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Unit == "" {
		opts.Unit = "events"
	}
	if opts.LogEvery <= 0 {
		opts.LogEvery = DefaultLogEvery
	}
	r := &Reporter{name: name, unit: opts.Unit, logger: opts.Logger, every: opts.LogEvery, started: time.Now()}
	if opts.ForceBar || isTerminal(opts.Output) {
		r.container = mpb.New(mpb.WithOutput(opts.Output), mpb.WithWidth(40), mpb.WithAutoRefresh())
		r.bar = r.container.AddBar(0,
			mpb.PrependDecorators(decor.Name(name+" ", decor.WCSyncSpaceR), decor.CountersNoUnit("%d / %d", decor.WCSyncSpace)),
			mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace), decor.AverageSpeed(0, " %.0f "+opts.Unit+"/s", decor.WCSyncSpace),
				decor.OnComplete(decor.AverageETA(decor.ET_STYLE_MMSS, decor.WCSyncSpace), " done")),
		)
	}
	return r
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Update says done of total units are through (total may grow).
func (r *Reporter) Update(done, total uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return
	}
	r.done, r.total = done, max(total, done)
	if r.bar != nil {
		r.bar.SetTotal(int64(r.total), false)
		r.bar.SetCurrent(int64(r.done))
		return
	}
	if now := time.Now(); now.Sub(r.lastLog) >= r.every {
		r.lastLog = now
		r.log("progress")
	}
}

// Finish ends the report: err nil completes the bar and logs the totals;
// a failure aborts the bar and logs nothing (the caller reports the error).
func (r *Reporter) Finish(err error) {
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return
	}
	r.finished = true
	bar, container := r.bar, r.container
	if bar != nil {
		if err == nil {
			bar.SetTotal(int64(r.done), true)
		} else {
			bar.Abort(false)
		}
	}
	r.mu.Unlock()
	if container != nil {
		container.Wait()
	}
	if err == nil {
		r.mu.Lock()
		r.log("done")
		r.mu.Unlock()
	}
}

// log writes one line; r.mu is held.
func (r *Reporter) log(msg string) {
	elapsed := time.Since(r.started)
	attrs := []any{slog.String("operation", r.name), slog.Uint64(r.unit, r.done), slog.Uint64("total", r.total),
		slog.Duration("elapsed", elapsed.Round(time.Millisecond))}
	if r.total > 0 {
		attrs = append(attrs, slog.String("percent", percent(r.done, r.total)))
	}
	if s := elapsed.Seconds(); s > 0 {
		attrs = append(attrs, slog.Float64(r.unit+"_per_second", float64(int64(float64(r.done)/s))))
	}
	r.logger.Info(msg, attrs...)
}

func percent(done, total uint64) string {
	p := float64(done) * 100 / float64(total)
	return slog.Float64Value(float64(int(p*10))/10).String() + "%"
}
