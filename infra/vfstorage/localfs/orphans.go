package localfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

var _ vfstorage.Collector = (*Storage)(nil)

// FolderDirs implements vfstorage.Collector: it reads the host's fan-out
// directories and reports each entry named by a folder id that lives in
// the right fan-out directory and is a directory. Work in progress
// (".clone-<id>", ".delete-<id>") and anything else is left out.
func (s *Storage) FolderDirs(ctx context.Context, hostName string, fn func(vfstorage.FolderDir) error) error {
	const op = "vfstorage.folder-dirs"
	h, err := s.host(op, vfstorage.Ref{Host: hostName})
	if err != nil {
		return err
	}
	fans, err := fs.ReadDir(h.root.FS(), ".")
	if err != nil {
		return vfstorage.Internal(op, fmt.Errorf("host %s: %w", h.name, err))
	}
	for _, fan := range fans {
		if !fan.IsDir() || !isFanOut(fan.Name()) {
			continue
		}
		entries, err := fs.ReadDir(h.root.FS(), fan.Name())
		if err != nil {
			return vfstorage.Internal(op, fmt.Errorf("host %s: %w", h.name, err))
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return canceled(op, err)
			}
			id, err := uuid.Parse(e.Name())
			if err != nil || id.String() != e.Name() || fanOut(id) != fan.Name() || !e.IsDir() {
				continue
			}
			fi, err := e.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted meanwhile
			}
			if err != nil {
				return vfstorage.Internal(op, fmt.Errorf("host %s: %w", h.name, err))
			}
			if err := fn(vfstorage.FolderDir{Ref: vfstorage.Ref{Host: h.name, ID: id}, ModTime: fi.ModTime()}); err != nil {
				return err
			}
		}
	}
	return nil
}

// isFanOut reports whether name is a fan-out directory's: two lower-case
// hex digits.
func isFanOut(name string) bool {
	if len(name) != 2 {
		return false
	}
	for _, c := range []byte(name) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// SetAside implements vfstorage.Collector: it renames the folder's
// directory to <host>/.cairn-lost+found/<id> (<id>.<n> when that name is
// taken by an earlier one), under the folder's lock, and syncs both
// directories. The rename stays on the host's file system, so it is
// atomic and costs nothing whatever the folder holds.
func (s *Storage) SetAside(ctx context.Context, ref vfstorage.Ref) (string, error) {
	const op = "vfstorage.set-aside"
	h, err := s.host(op, ref)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", canceled(op, err)
	}
	st := s.state(ref)
	st.mu.Lock()
	defer st.mu.Unlock()
	defer s.dropState(ref)
	if err := h.root.Mkdir(vfstorage.LostAndFound, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", vfstorage.Internal(op, fmt.Errorf("host %s: %w", h.name, err))
	}
	name := ref.ID.String()
	for n := 1; ; n++ {
		if _, err := h.root.Lstat(vfstorage.LostAndFound + "/" + name); errors.Is(err, fs.ErrNotExist) {
			break
		} else if err != nil {
			return "", vfstorage.Internal(op, fmt.Errorf("folder %s: %w", ref, err))
		}
		name = ref.ID.String() + "." + strconv.Itoa(n)
	}
	err = h.root.Rename(folderDir(ref.ID), vfstorage.LostAndFound+"/"+name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", vfstorage.Failf(op, "", "", vfstorage.ErrNoFolder, ref.String())
	case err != nil:
		return "", vfstorage.Internal(op, fmt.Errorf("folder %s: %w", ref, err))
	}
	st.forget()
	for _, dir := range []string{fanOut(ref.ID), vfstorage.LostAndFound} {
		if err := syncDir(h.root, dir); err != nil {
			return "", vfstorage.Internal(op, fmt.Errorf("folder %s set aside as %s, not durably: %w", ref, name, err))
		}
	}
	return vfstorage.LostAndFound + "/" + name, nil
}
