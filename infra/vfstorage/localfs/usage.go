package localfs

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

// Usage accounting. The backend measures a folder by walking it, and keeps
// the result per folder: a walk costs about a microsecond per entry, too
// much to repeat for every upload's quota check. The cached value is kept
// exact for writes through the port — every write applies its delta under
// the folder's lock, which walks hold too — and is walked again on demand
// once it is older than Config.UsageTTL, which bounds how long writes made
// by sessions (through the folder's mount) go unnoticed. A write whose
// delta cannot be known cheaply (a file with several hard links) drops the
// cached value instead, so the next use walks.
//
// Each server process keeps its own cache: replicas sharing a host see
// each other's writes after at most the TTL, and a quota check may then
// let through what another replica wrote in the same moment.

// folderState is what the process knows of one folder.
type folderState struct {
	// mu serialises the port's writes to the folder with each other and
	// with walks (not with streaming an upload, which happens unlocked).
	mu       sync.Mutex
	usage    vfstorage.Usage
	measured time.Time // zero: unknown
}

func (s *Storage) state(ref vfstorage.Ref) *folderState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.states[ref]
	if !ok {
		st = &folderState{}
		s.states[ref] = st
	}
	return st
}

func (s *Storage) dropState(ref vfstorage.Ref) {
	s.mu.Lock()
	delete(s.states, ref)
	s.mu.Unlock()
}

// add applies a write's delta to a known usage; st.mu must be held.
func (st *folderState) add(bytes, files int64) {
	if st.measured.IsZero() {
		return
	}
	st.usage.Bytes += bytes
	st.usage.Files += files
	if st.usage.Bytes < 0 || st.usage.Files < 0 { // a session removed files behind our back
		st.forget()
	}
}

// forget drops the cached usage; st.mu must be held.
func (st *folderState) forget() { st.measured = time.Time{} }

// Usage reports how much a folder holds.
func (s *Storage) Usage(ctx context.Context, ref vfstorage.Ref) (vfstorage.Usage, error) {
	const op = "vfstorage.usage"
	// A fresh cached value answers without touching the disk: a caller
	// summing an owner's thousands of folders costs a lookup per folder.
	if u, ok := s.cached(ref); ok {
		return u, nil
	}
	root, err := s.openFolder(op, ref)
	if err != nil {
		return vfstorage.Usage{}, err
	}
	defer root.Close()
	st := s.state(ref)
	st.mu.Lock()
	defer st.mu.Unlock()
	return s.measure(ctx, op, root, st, s.cfg.UsageTTL)
}

// cached answers the folder's usage if it was measured less than
// Config.UsageTTL ago.
func (s *Storage) cached(ref vfstorage.Ref) (vfstorage.Usage, bool) {
	s.mu.Lock()
	st, ok := s.states[ref]
	s.mu.Unlock()
	if !ok {
		return vfstorage.Usage{}, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.measured.IsZero() || s.now().Sub(st.measured) >= s.cfg.UsageTTL {
		return vfstorage.Usage{}, false
	}
	return st.usage, true
}

// RefreshUsage walks the folder now.
func (s *Storage) RefreshUsage(ctx context.Context, ref vfstorage.Ref) (vfstorage.Usage, error) {
	const op = "vfstorage.refresh-usage"
	root, err := s.openFolder(op, ref)
	if err != nil {
		return vfstorage.Usage{}, err
	}
	defer root.Close()
	st := s.state(ref)
	st.mu.Lock()
	defer st.mu.Unlock()
	return s.measure(ctx, op, root, st, 0)
}

// measure returns the folder's usage, walking it when the cached value is
// unknown or older than ttl; st.mu must be held. A walk also removes the
// folder's abandoned staging files and expired resumable uploads, and
// counts the live uploads' lengths (reserved from their creation).
func (s *Storage) measure(ctx context.Context, op string, root *os.Root, st *folderState, ttl time.Duration) (vfstorage.Usage, error) {
	now := s.now()
	if !st.measured.IsZero() && now.Sub(st.measured) < ttl {
		return st.usage, nil
	}
	u, err := walkUsage(ctx, root, ".")
	if err != nil {
		return vfstorage.Usage{}, classify(op, "", "", err)
	}
	live, _, _ := s.scanUploads(root, now)
	u.Bytes += live
	st.usage, st.measured = u, now
	s.sweepStaging(root, now.Add(-s.cfg.StagingMaxAge))
	return u, nil
}

// walkUsage measures the tree at dir (the folder's ReservedName excluded,
// dir itself not counted). fs.WalkDir over root.FS() resolves every
// directory through the root, so a symbolic link never leads it out of the
// folder; it does not descend into symbolic links. Entries that vanish
// during the walk (a session deleting files) are skipped.
func walkUsage(ctx context.Context, root *os.Root, dir string) (vfstorage.Usage, error) {
	var (
		u     vfstorage.Usage
		n     int
		links map[uint64]bool // inodes of files with several links, counted once
	)
	err := fs.WalkDir(root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != dir {
				return nil
			}
			return err
		}
		if n++; n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if p == dir {
			return nil
		}
		if p == vfstorage.ReservedName {
			return fs.SkipDir
		}
		u.Files++
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
			if links == nil {
				links = make(map[uint64]bool)
			}
			if links[st.Ino] {
				return nil
			}
			links[st.Ino] = true
		}
		u.Bytes += fi.Size()
		return nil
	})
	return u, err
}

// sweepStaging removes staging files last written before cutoff: uploads
// whose process died.
func (s *Storage) sweepStaging(root *os.Root, cutoff time.Time) {
	dir, err := root.Open(vfstorage.ReservedName)
	if err != nil {
		return // none yet, or not ours to fix here
	}
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() == resumableName {
			continue // resumable uploads expire on their own terms (scanUploads)
		}
		fi, err := e.Info()
		if err != nil || !fi.ModTime().Before(cutoff) {
			continue
		}
		if err := root.Remove(vfstorage.ReservedName + "/" + e.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("removing an abandoned upload", slog.String("file", e.Name()), slog.Any("err", err))
		}
	}
}
