package maintenance

import (
	"context"
	"net/url"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/lease"
	"github.com/cairnhq/cairn/projections"
)

// SystemConfig is what System reports beyond the read models: filled in by
// the server that runs the Service.
type SystemConfig struct {
	Version string
	// StoreDSN is the event store's DSN; System shows it without
	// credentials.
	StoreDSN string
	// Bus is the message bus: embedded or external, its URL, whether the
	// server's connection is up.
	Bus func() Bus
	// Leases tracks the singleton process managers' leases.
	Leases *Leases
	// LeaseTable, if set, reads the leases as the store holds them (on
	// PostgreSQL: holder, epoch, expiry, whoever holds them), by the names
	// Leases tracks.
	LeaseTable func(ctx context.Context) (map[string]lease.State, error)
	// DataDirFree is the room left on the data directory's file system
	// (-1 when unknown).
	DataDirFree func() int64
}

// System describes the running server (GET /v1/system).
type System struct {
	Version    string      `json:"version"`
	GoVersion  string      `json:"go_version"`
	StartedAt  time.Time   `json:"started_at"`
	Store      Store       `json:"store"`
	Bus        Bus         `json:"bus"`
	Leases     []Lease     `json:"leases"`
	ReadModels []ReadModel `json:"read_models"`
	// DataDirFreeBytes is -1 when unknown.
	DataDirFreeBytes int64 `json:"data_dir_free_bytes"`
}

// Store is the event store: its backend (sqlite or postgres), its DSN
// without credentials, and the position of its last event.
type Store struct {
	Backend string `json:"backend"`
	DSN     string `json:"dsn"`
	Head    uint64 `json:"head"`
}

// Bus is the message bus: "embedded" (the NATS server runs in this
// process) or "external", its URL without credentials, and whether the
// server's own connection is up.
type Bus struct {
	Mode      string `json:"mode"`
	URL       string `json:"url"`
	Connected bool   `json:"connected"`
}

// Lease is one singleton process manager and whether this process holds
// its lease (runs it) now, since when and at which epoch; on PostgreSQL,
// also the lease as the store's table has it (whoever holds it).
type Lease struct {
	Name      string     `json:"name"`
	Mechanism string     `json:"mechanism"`
	HeldHere  bool       `json:"held_here"`
	Since     *time.Time `json:"since"`
	// Epoch is the epoch this process leads at (0 when it does not, or
	// the lease has no epoch: a file lock).
	Epoch int64 `json:"epoch,omitempty"`
	// Current is the lease in the store's table (PostgreSQL), absent when
	// there is none or it could not be read.
	Current *lease.State `json:"current,omitempty"`
}

// ReadModel is one read model's progress: the position it reflects, its
// lag behind the log's head (in positions: dense on SQLite, so events;
// sparse on PostgreSQL), whether its projector is paused (a full disk) or
// a rebuild of it runs.
type ReadModel struct {
	Name       string `json:"name"`
	Position   uint64 `json:"position"`
	Lag        uint64 `json:"lag"`
	Paused     string `json:"paused,omitempty"`
	Rebuilding bool   `json:"rebuilding"`
}

// System describes the server now.
func (s *Service) System(ctx context.Context) (System, error) {
	head, err := projections.Head(ctx, s.cfg.DB)
	if err != nil {
		return System{}, err
	}
	c := s.cfg.System
	out := System{
		Version:          c.Version,
		GoVersion:        runtime.Version(),
		StartedAt:        s.started.UTC(),
		Store:            Store{Backend: s.cfg.DB.Dialect().String(), DSN: RedactDSN(c.StoreDSN), Head: head},
		Leases:           c.Leases.List(),
		DataDirFreeBytes: -1,
	}
	if c.LeaseTable != nil {
		// The table is a diagnosis: the rest of the answer stands without it.
		if table, err := c.LeaseTable(ctx); err == nil {
			for i, l := range out.Leases {
				if st, ok := table[l.Name]; ok {
					out.Leases[i].Current = &st
				}
			}
		} else {
			s.cfg.Logger.Warn("maintenance: read the leases table", "error", err)
		}
	}
	if c.Bus != nil {
		out.Bus = c.Bus()
		out.Bus.URL = RedactDSN(out.Bus.URL)
	}
	if c.DataDirFree != nil {
		out.DataDirFreeBytes = c.DataDirFree()
	}
	s.mu.Lock()
	runners := slices.Clone(s.runners)
	s.mu.Unlock()
	out.ReadModels = make([]ReadModel, 0, len(runners))
	for _, r := range runners {
		pos := r.p.Position()
		rm := ReadModel{Name: r.p.Name(), Position: pos, Rebuilding: s.rebuilding(r.p.Name())}
		if head > pos {
			rm.Lag = head - pos
		}
		if err := r.p.Paused(); err != nil {
			rm.Paused = err.Error()
		}
		out.ReadModels = append(out.ReadModels, rm)
	}
	return out, nil
}

// secretParams are DSN query parameters that hold secrets.
var secretParams = []string{"password", "sslpassword", "passfile", "sslkey", "token"}

// RedactDSN returns dsn without credentials: no user information and no
// secret query parameter. What does not parse as a URL is hidden whole.
func RedactDSN(dsn string) string {
	if dsn == "" {
		return ""
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return "(hidden: not a URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if slices.Contains(secretParams, strings.ToLower(k)) {
				q.Del(k)
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Leases tracks which singleton process managers this process leads.
type Leases struct {
	mu        sync.Mutex
	mechanism string
	clock     func() time.Time
	held      map[string]heldLease
}

// heldLease is since when (nil: not held) and at which epoch this process
// leads.
type heldLease struct {
	since *time.Time
	epoch int64
}

// NewLeases returns a tracker of leases taken by mechanism (how they are
// held: a file lock, a PostgreSQL lease with an epoch).
func NewLeases(mechanism string, clock func() time.Time) *Leases {
	if clock == nil {
		clock = time.Now
	}
	return &Leases{mechanism: mechanism, clock: clock, held: map[string]heldLease{}}
}

// Track returns fn, the work done under the lease name (lease.Run's fn),
// recording while it runs that this process holds the lease, and the
// epoch of the fence its context carries.
func (l *Leases) Track(name string, fn func(context.Context) error) func(context.Context) error {
	l.mu.Lock()
	l.held[name] = heldLease{}
	l.mu.Unlock()
	return func(ctx context.Context) error {
		now := l.clock().UTC()
		h := heldLease{since: &now}
		if f, ok := eventstore.FenceFrom(ctx); ok {
			h.epoch = f.Epoch
		}
		l.mu.Lock()
		l.held[name] = h
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			l.held[name] = heldLease{}
			l.mu.Unlock()
		}()
		return fn(ctx)
	}
}

// List returns every lease tracked, by name; nil l lists none.
func (l *Leases) List() []Lease {
	out := []Lease{}
	if l == nil {
		return out
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, h := range l.held {
		out = append(out, Lease{Name: name, Mechanism: l.mechanism, HeldHere: h.since != nil, Since: h.since, Epoch: h.epoch})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
