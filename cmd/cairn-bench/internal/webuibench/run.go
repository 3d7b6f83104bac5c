package webuibench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"syscall"
	"time"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/browsertest"
	"github.com/cairnhq/cairn/infra/devserver"
	"github.com/cairnhq/cairn/infra/vfstorage/localfs"
)

// Size is a store size the pages are measured at.
type Size struct {
	Sessions, Folders int
}

func (s Size) String() string { return fmt.Sprintf("%d sessions, %d folders", s.Sessions, s.Folders) }

// Config configures Run.
type Config struct {
	// Sizes are the store sizes, smallest first (the first is the
	// baseline the others are compared with).
	Sizes []Size
	// Loads is how many measured loads of each page, after Warmup
	// unmeasured ones.
	Loads, Warmup int
	// Changes is how many sessions the SSE phase creates, per target (the
	// Sessions page, the bare EventSource).
	Changes int
	// ServerProfile, if set, is called as the browser run at the largest
	// size starts; what it returns is called when that run ends (a CPU
	// profile of the server, which runs in this process).
	ServerProfile func() (stop func())
	// Tools are Node, Chromium and web/ui (browsertest.Find).
	Tools browsertest.Tools
	// Timeout bounds one browser run (default 2h: at 100,000 sessions each
	// create of the SSE phase takes seconds, its admission summing the
	// owner's pending sessions).
	Timeout time.Duration
	// Image is the sessions' image.
	Image string
	// Quiet is how long the server must have appended nothing, its
	// projectors all at the log's end, before the browser runs (Settle).
	Quiet time.Duration
}

// Defaults of Config.
const (
	DefaultLoads   = 50
	DefaultWarmup  = 5
	DefaultChanges = 200
	DefaultTimeout = 2 * time.Hour
	DefaultQuiet   = 3 * time.Second
)

// DefaultSizes are issue #19's store (100,000 sessions, 10,000 folders)
// and a baseline a hundred times smaller.
var DefaultSizes = []Size{{Sessions: 1000, Folders: 100}, {Sessions: 100_000, Folders: 10_000}}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if len(c.Sizes) == 0 {
		errs = append(errs, errors.New("no store size"))
	}
	for i, s := range c.Sizes {
		if s.Sessions < 1 || s.Folders < 1 {
			errs = append(errs, fmt.Errorf("size %s: needs at least one session and one folder (the pages' first rows are measured)", s))
		}
		if i > 0 && (s.Sessions < c.Sizes[i-1].Sessions || s.Folders < c.Sizes[i-1].Folders) {
			errs = append(errs, fmt.Errorf("sizes must grow: %s after %s", s, c.Sizes[i-1]))
		}
	}
	if c.Loads < 1 {
		errs = append(errs, fmt.Errorf("loads %d: must be at least 1", c.Loads))
	}
	if c.Warmup < 0 || c.Changes < 0 || c.Quiet < 0 {
		errs = append(errs, errors.New("warm-up, changes and quiet must not be negative"))
	}
	if c.Image == "" {
		errs = append(errs, errors.New("no image"))
	}
	return errors.Join(errs...)
}

// Result is what Run measured at each size.
type Result struct {
	Sizes []SizeResult
}

// SizeResult is one store size's measurements.
type SizeResult struct {
	Size Size
	// Seeding is how long this size's seeding took (up from the last
	// size), until the read models showed it.
	Seeding time.Duration
	// Pages are the measured pages, in the order of the script.
	Pages []PageResult
	// SSEPage and SSEBare are the delivery times of the changes to the
	// Sessions page and to the bare EventSource.
	SSEPage, SSEBare []time.Duration
	// ServerCPU is the CPU time this process (the server; the browser
	// and Node are other processes) used during the browser run, of Wall.
	ServerCPU, Wall time.Duration
}

// PageResult is one page's loads at one size.
type PageResult struct {
	Path string
	// Painted is navigation start → the frame after the first row is in
	// the DOM; DOM is navigation start → the first row in the DOM.
	Painted, DOM []time.Duration
	// HTML, Script and API are navigation start → the document, the
	// app's script and the load's last API answer received.
	HTML, Script, API []time.Duration
	// Requests are the API requests of the loads ("GET /v1/..."), one
	// list per load; Queries the read-model queries of each load.
	Requests [][]string
	Queries  []int
}

// Run starts the server of sc, seeds its store up to each size in turn
// and measures the pages there, and stops the server. Beyond one session
// and one folder per user made through the API, the sessions and folders
// are appended while the server is stopped, as copies of those events:
// through the API each create costs time that grows with its owner's
// objects (RequestSession's admission sums the owner's pending sessions,
// CreateVFolder reads the owner's whole folder index), so 100,000 of them
// would take hours. The server restarts on the grown store and its
// projectors catch up from the log before it serves.
func Run(ctx context.Context, sc ServerConfig, cfg Config) (res Result, err error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	storeDSN := devserver.Config{DataDir: sc.DataDir, Store: sc.Store}.WithDefaults().Store
	srv, err := StartServer(ctx, sc)
	if err != nil {
		return Result{}, err
	}
	defer func() {
		if srv != nil {
			err = errors.Join(err, srv.Stop())
		}
	}()
	seeder, err := NewSeeder(ctx, srv)
	if err != nil {
		return Result{}, fmt.Errorf("provision the users: %w", err)
	}
	for i, size := range cfg.Sizes {
		slog.Info("web-UI benchmark: seeding", "size", size.String())
		start := time.Now()
		// minSeen is how many events the restarted server's projectors
		// see before it has settled.
		var minSeen uint64
		if size.Sessions > seeder.sessions || size.Folders > seeder.folders {
			// The appends (a session's event, a folder's two), and the
			// scheduler's record of why each new session waits.
			newSessions, newFolders := max(size.Sessions-seeder.sessions, 0), max(size.Folders-seeder.folders, 0)
			minSeen = uint64(2*newSessions + 2*newFolders)
			err = srv.Stop()
			srv = nil
			if err != nil {
				return res, fmt.Errorf("stop the server to append: %w", err)
			}
			owner := func(n int) string { return seeder.owner(n).ID }
			if err := offline(ctx, storeDSN, sc.DataDir, func(store eventstore.Store, storage *localfs.Storage) error {
				return errors.Join(
					appendSessions(ctx, store, seeder.templateIDs, owner, seeder.sessions, size.Sessions),
					appendFolders(ctx, store, storage, seeder.folderTemplateIDs, owner, seeder.folders, size.Folders))
			}); err != nil {
				return res, fmt.Errorf("append: %w", err)
			}
			seeder.sessions, seeder.folders = max(seeder.sessions, size.Sessions), max(seeder.folders, size.Folders)
			slog.Info("web-UI benchmark: restarting cairn dev on the grown store (its read models catch up first)")
			if srv, err = StartServer(ctx, sc); err != nil {
				return res, err
			}
			seeder.srv = srv
		}
		if err := seeder.CatchUp(ctx); err != nil {
			return res, err
		}
		if err := seeder.Settle(ctx, minSeen, cfg.Quiet); err != nil {
			return res, err
		}
		sr := SizeResult{Size: size, Seeding: time.Since(start)}
		slog.Info("web-UI benchmark: seeded; measuring in the browser", "size", size.String(), "took", sr.Seeding.Round(time.Millisecond))
		stop := func() {}
		if cfg.ServerProfile != nil && i == len(cfg.Sizes)-1 {
			stop = cfg.ServerProfile()
		}
		cpu0, wall0 := processCPU(), time.Now()
		out, err := runBrowser(ctx, cfg, srv, seeder.Measured, fmt.Sprintf("size%d", i+1))
		sr.ServerCPU, sr.Wall = processCPU()-cpu0, time.Since(wall0)
		stop()
		if err != nil {
			return res, fmt.Errorf("size %s: %w", size, err)
		}
		sr.fill(out)
		res.Sizes = append(res.Sizes, sr)
	}
	return res, nil
}

// fill takes the browser's samples.
func (sr *SizeResult) fill(out browserOutput) {
	for _, path := range pagePaths {
		p := PageResult{Path: path}
		for _, s := range out.Pages[path] {
			p.Painted = append(p.Painted, ms(s.Painted))
			p.DOM = append(p.DOM, ms(s.DOM))
			p.HTML = append(p.HTML, ms(s.HTML))
			p.Script = append(p.Script, ms(s.Script))
			p.API = append(p.API, ms(s.API))
			p.Requests = append(p.Requests, s.Requests)
			p.Queries = append(p.Queries, int(s.Queries))
		}
		sr.Pages = append(sr.Pages, p)
	}
	for _, v := range out.SSE.Page {
		sr.SSEPage = append(sr.SSEPage, ms(v))
	}
	for _, v := range out.SSE.Bare {
		sr.SSEBare = append(sr.SSEBare, ms(v))
	}
}

// ms turns the browser's milliseconds into a Duration.
func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// Percentile is the nearest-rank percentile of samples (0 of none).
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	rank := int(p/100*float64(len(sorted)) + 0.999999)
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// processCPU is the CPU time (user and system) this process has used so
// far; 0 when the system cannot tell.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
