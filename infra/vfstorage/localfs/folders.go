package localfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

// Modes of what the backend makes. Sessions that run as another user than
// the server need the folder's ownership or mode adjusted where it is
// mounted; that is the agent's business.
const (
	dirMode  fs.FileMode = 0o755
	fileMode fs.FileMode = 0o644
)

// CreateFolder makes the folder's directory (and its fan-out directory).
// A folder that exists already is left as it is.
func (s *Storage) CreateFolder(ctx context.Context, ref vfstorage.Ref) error {
	const op = "vfstorage.create-folder"
	h, err := s.host(op, ref)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return canceled(op, err)
	}
	st := s.state(ref)
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := h.root.MkdirAll(fanOut(ref.ID), dirMode); err != nil {
		return vfstorage.Internal(op, fmt.Errorf("host %s: %w", h.name, err))
	}
	err = h.root.Mkdir(folderDir(ref.ID), dirMode)
	switch {
	case err == nil:
		st.usage, st.measured = vfstorage.Usage{}, s.now()
		if err := syncDir(h.root, fanOut(ref.ID)); err != nil {
			return vfstorage.Internal(op, fmt.Errorf("folder %s: %w", ref, err))
		}
		return nil
	case errors.Is(err, fs.ErrExist):
		fi, err := h.root.Lstat(folderDir(ref.ID))
		if err == nil && fi.IsDir() {
			return nil
		}
		return vfstorage.Internal(op, fmt.Errorf("folder %s exists and is not a directory (%v)", ref, err))
	}
	return vfstorage.Internal(op, fmt.Errorf("folder %s: %w", ref, err))
}

// DeleteFolder removes the folder's directory: it first renames it to
// ".delete-<id>", so the folder is gone at once even if removing a large
// tree takes a while or is interrupted (a later call finishes it). The
// removal does not stop when ctx ends.
func (s *Storage) DeleteFolder(ctx context.Context, ref vfstorage.Ref) error {
	const op = "vfstorage.delete-folder"
	h, err := s.host(op, ref)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return canceled(op, err)
	}
	st := s.state(ref)
	st.mu.Lock()
	defer st.mu.Unlock()
	defer s.dropState(ref)
	trash := deleteDir(ref.ID)
	if err := h.root.RemoveAll(trash); err != nil {
		return vfstorage.Internal(op, fmt.Errorf("folder %s: finishing an earlier deletion: %w", ref, err))
	}
	err = h.root.Rename(folderDir(ref.ID), trash)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return vfstorage.Internal(op, fmt.Errorf("folder %s: %w", ref, err))
	}
	st.forget()
	if err := h.root.RemoveAll(trash); err != nil {
		return vfstorage.Internal(op, fmt.Errorf("folder %s: %w", ref, err))
	}
	return nil
}
