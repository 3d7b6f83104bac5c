package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/domain"
)

// recordState is where a kernel is in the agent's own records. States only
// move forward (see rank): a late write of an earlier state never undoes a
// destroy.
type recordState string

const (
	// statePending: a kernel.create was accepted; its container may not
	// exist or run yet. A restarted agent resumes the creation.
	statePending recordState = "pending"
	// stateStarted: the container was started; its labels are the truth
	// from now on.
	stateStarted recordState = "started"
	// stateFailed: the kernel could not be created or started and was
	// reported failed.
	stateFailed recordState = "failed"
	// stateDestroying: a kernel.destroy (or an orphan sync) was accepted; a
	// restarted agent finishes removing the container.
	stateDestroying recordState = "destroying"
	// stateRemoved: the container is gone and was reported removed. A
	// kernel.create for the kernel creates nothing.
	stateRemoved recordState = "removed"
)

func (s recordState) rank() int {
	switch s {
	case statePending:
		return 0
	case stateStarted, stateFailed:
		return 1
	case stateDestroying:
		return 2
	case stateRemoved:
		return 3
	}
	return -1
}

// final reports whether the kernel is over for the agent: no container
// will be created for it again.
func (s recordState) final() bool {
	return s == stateFailed || s == stateDestroying || s == stateRemoved
}

// record is what the agent keeps of one kernel in its data directory.
type record struct {
	KernelID  uuid.UUID   `json:"kernel_id"`
	SessionID uuid.UUID   `json:"session_id"`
	State     recordState `json:"state"`
	// Create is the accepted kernel.create (nil if the agent only ever saw
	// a destroy).
	Create *protocol.KernelCreate `json:"create,omitempty"`
	// ContainerID is the kernel's container, once created.
	ContainerID string `json:"container_id,omitempty"`
	// Ports are the host ports published for the kernel's service ports,
	// chosen before its container was created; AppToken is the secret the
	// agent adds to the requests it forwards to the kernel's apps (see
	// EnvAppToken). Records are files only the agent's user reads (0600).
	Ports    []domain.PublishedPort `json:"ports,omitempty"`
	AppToken string                 `json:"app_token,omitempty"`
	// Reason and Message explain a failure or a destroy.
	Reason    string    `json:"reason,omitempty"`
	Message   string    `json:"message,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ledger keeps one record per kernel, one JSON file each in
// <data dir>/kernels, written atomically (temporary file, fsync, rename).
// It is safe for concurrent use.
type ledger struct {
	dir string
	mu  sync.Mutex
}

const recordExt = ".json"

func openLedger(dataDir string) (*ledger, error) {
	dir := filepath.Join(dataDir, "kernels")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("agent records: %w", err)
	}
	return &ledger{dir: dir}, nil
}

func (l *ledger) path(id uuid.UUID) string { return filepath.Join(l.dir, id.String()+recordExt) }

// get returns the kernel's record, if any.
func (l *ledger) get(id uuid.UUID) (record, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.read(id)
}

func (l *ledger) read(id uuid.UUID) (record, bool, error) {
	data, err := os.ReadFile(l.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return record{}, false, nil
	}
	if err != nil {
		return record{}, false, fmt.Errorf("agent records: %w", err)
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil || r.KernelID != id {
		return record{}, false, fmt.Errorf("agent records: %s is corrupt: %v", l.path(id), err)
	}
	return r, true, nil
}

// advance moves the kernel's record to state, applying change to it, and
// returns the result. A record already past state (by rank) is left as it
// is and returned with false: a late "started" never overwrites
// "destroying". A kernel without a record gets one.
func (l *ledger) advance(id, session uuid.UUID, state recordState, change func(*record)) (record, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok, err := l.read(id)
	if err != nil {
		return record{}, false, err
	}
	if !ok {
		r = record{KernelID: id, SessionID: session}
	}
	if ok && r.State.rank() > state.rank() {
		return r, false, nil
	}
	if ok && r.State.rank() == state.rank() && r.State != state {
		return r, false, nil // started and failed exclude each other
	}
	r.State = state
	if change != nil {
		change(&r)
	}
	r.UpdatedAt = time.Now().UTC()
	return r, true, l.write(r)
}

func (l *ledger) write(r record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("agent records: %w", err)
	}
	f, err := os.CreateTemp(l.dir, ".tmp-"+r.KernelID.String()+"-*")
	if err != nil {
		return fmt.Errorf("agent records: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, l.path(r.KernelID))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("agent records: write %s: %w", r.KernelID, err)
	}
	return nil
}

// all returns every record. Files that are not records are skipped;
// leftovers of interrupted writes are removed.
func (l *ledger) all() ([]record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("agent records: %w", err)
	}
	var out []record
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".tmp-") {
			_ = os.Remove(filepath.Join(l.dir, name))
			continue
		}
		id, err := uuid.Parse(strings.TrimSuffix(name, recordExt))
		if err != nil || !strings.HasSuffix(name, recordExt) {
			continue
		}
		r, ok, err := l.read(id)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// forget deletes a record.
func (l *ledger) forget(id uuid.UUID) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := os.Remove(l.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("agent records: %w", err)
	}
	return nil
}
