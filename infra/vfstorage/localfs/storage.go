package localfs

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

// Backend is the name HostInfo reports for this backend's hosts.
const Backend = "localfs"

// Storage keeps vfolders as directories under the host directories of its
// Config. It is safe for concurrent use.
type Storage struct {
	cfg   Config
	log   *slog.Logger
	hosts map[string]*host
	infos []vfstorage.HostInfo
	now   func() time.Time

	mu     sync.Mutex
	states map[vfstorage.Ref]*folderState
	// uploadLocks hold each resumable upload while a chunk is written.
	uploadLocks semaphores
}

var _ vfstorage.Storage = (*Storage)(nil)

type host struct {
	name string
	path string
	root *os.Root // the host directory; every access goes through it
}

// Open validates cfg and opens every host directory (making missing ones
// when cfg.CreateHostDirs). It fails if any of them is not a directory.
func Open(cfg Config, logger *slog.Logger) (*Storage, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	s := &Storage{
		cfg:    cfg,
		log:    logger.With(slog.String("component", "vfstorage")),
		hosts:  make(map[string]*host, len(cfg.Hosts)),
		now:    time.Now,
		states: make(map[vfstorage.Ref]*folderState),
	}
	var errs []error
	for _, h := range cfg.Hosts {
		if cfg.CreateHostDirs {
			if err := os.MkdirAll(h.Path, 0o755); err != nil {
				errs = append(errs, fmt.Errorf("host %s: %w", h, err))
				continue
			}
		}
		root, err := os.OpenRoot(h.Path)
		if err != nil {
			errs = append(errs, fmt.Errorf("host %s: %w", h, err))
			continue
		}
		s.hosts[h.Name] = &host{name: h.Name, path: h.Path, root: root}
		s.infos = append(s.infos, vfstorage.HostInfo{Name: h.Name, Backend: Backend})
	}
	if err := errors.Join(errs...); err != nil {
		s.Close()
		return nil, fmt.Errorf("vfolder storage: %w", err)
	}
	slices.SortFunc(s.infos, func(a, b vfstorage.HostInfo) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	s.log.Info("vfolder storage opened", slog.Any("config", cfg))
	return s, nil
}

// Close releases the host directories. Operations started before Close
// may fail; none may start after it.
func (s *Storage) Close() error {
	for _, h := range s.hosts {
		h.root.Close()
	}
	return nil
}

// Hosts lists the configured hosts, sorted by name.
func (s *Storage) Hosts() []vfstorage.HostInfo { return slices.Clone(s.infos) }

// Folder layout inside a host directory: a folder's data is the directory
// named by its id, under a fan-out directory named by the id's last two
// hex digits ("<host>/3f/0190c1a2-7c4e-7d3a-b1e2-a1b2c3d4e53f"). The last
// digits, not the first: ids are UUIDv7, whose first digits are a
// timestamp shared by every folder made in the same years, while the last
// ones are random. 256 fan-out directories keep each one small enough to
// list or back up comfortably at millions of folders, at the cost of one
// extra path step. Names starting with "." in a fan-out directory are work
// in progress: ".clone-<id>" (a clone being copied) and ".delete-<id>" (a
// folder being deleted).
func fanOut(id uuid.UUID) string { return id.String()[34:] }

func folderDir(id uuid.UUID) string { return fanOut(id) + "/" + id.String() }

func cloneDir(id uuid.UUID) string { return fanOut(id) + "/.clone-" + id.String() }

func deleteDir(id uuid.UUID) string { return fanOut(id) + "/.delete-" + id.String() }

func (s *Storage) host(op string, ref vfstorage.Ref) (*host, error) {
	h, ok := s.hosts[ref.Host]
	if !ok {
		return nil, vfstorage.Failf(op, "host", ref.Host, vfstorage.ErrUnknownHost, "is not configured")
	}
	return h, nil
}

// openFolder opens a folder's directory as a root, through which every
// access to its files goes.
func (s *Storage) openFolder(op string, ref vfstorage.Ref) (*os.Root, error) {
	h, err := s.host(op, ref)
	if err != nil {
		return nil, err
	}
	root, err := h.root.OpenRoot(folderDir(ref.ID))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, vfstorage.Failf(op, "", "", vfstorage.ErrNoFolder, ref.String())
		}
		return nil, vfstorage.Internal(op, fmt.Errorf("folder %s: %w", ref, err))
	}
	return root, nil
}

// MountSource is the folder's directory on the host.
func (s *Storage) MountSource(ref vfstorage.Ref) (string, error) {
	const op = "vfstorage.mount-source"
	h, err := s.host(op, ref)
	if err != nil {
		return "", err
	}
	fi, err := h.root.Lstat(folderDir(ref.ID))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", vfstorage.Failf(op, "", "", vfstorage.ErrNoFolder, ref.String())
	case err != nil:
		return "", vfstorage.Internal(op, err)
	case !fi.IsDir():
		return "", vfstorage.Internal(op, fmt.Errorf("folder %s: not a directory", ref))
	}
	return filepath.Join(h.path, filepath.FromSlash(folderDir(ref.ID))), nil
}
