package localfs

import (
	"context"
	"os"
	"path"
	"syscall"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

// Download opens a regular file for reading and returns the *os.File.
// Only regular files are opened: a FIFO would block the reader and a
// device node made inside a session would read the host's device. The
// type is checked before opening (no open at all of anything else) and
// again on the open file (O_NONBLOCK, so that a FIFO swapped in between
// cannot block the open).
func (s *Storage) Download(ctx context.Context, ref vfstorage.Ref, p string) (vfstorage.ReadSeekCloser, vfstorage.FileInfo, error) {
	const op = "vfstorage.download"
	clean, err := vfstorage.CleanPath(op, "path", p)
	if err != nil {
		return nil, vfstorage.FileInfo{}, err
	}
	if clean == "." {
		return nil, vfstorage.FileInfo{}, vfstorage.Failf(op, "path", p, vfstorage.ErrIsDir, "(the folder's root)")
	}
	if err := ctx.Err(); err != nil {
		return nil, vfstorage.FileInfo{}, canceled(op, err)
	}
	root, err := s.openFolder(op, ref)
	if err != nil {
		return nil, vfstorage.FileInfo{}, err
	}
	defer root.Close()
	fi, err := root.Stat(clean)
	if err != nil {
		return nil, vfstorage.FileInfo{}, classify(op, "path", clean, err)
	}
	if err := regular(op, clean, fi.Mode()); err != nil {
		return nil, vfstorage.FileInfo{}, err
	}
	f, err := root.OpenFile(clean, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, vfstorage.FileInfo{}, classify(op, "path", clean, err)
	}
	if fi, err = f.Stat(); err == nil {
		err = regular(op, clean, fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, vfstorage.FileInfo{}, err
	}
	info := vfstorage.InfoOf(fi)
	info.Name = path.Base(clean)
	return f, info, nil
}

func regular(op, clean string, m os.FileMode) error {
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return vfstorage.Fail(op, "path", clean, vfstorage.ErrIsDir)
	}
	return vfstorage.Fail(op, "path", clean, vfstorage.ErrNotRegular)
}
