package localfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

// CloneFolder copies src into ".clone-<dst id>" next to where dst goes,
// makes the copy durable with one syncfs of dst's file system (cheaper
// than an fsync per file for trees of many small files), then renames it
// into place. Regular files (contents through copy_file_range, so the
// kernel may share extents), directories and symbolic links (verbatim:
// they are resolved through os.Root when used) are copied with their
// permission bits, modification times and, when the server may set them,
// owners; FIFOs, sockets and device nodes are left out. An earlier
// interrupted clone's leftovers are removed first.
func (s *Storage) CloneFolder(ctx context.Context, src, dst vfstorage.Ref, progress func(vfstorage.CloneProgress)) error {
	const op = "vfstorage.clone-folder"
	if src == dst {
		return vfstorage.Failf(op, "dst", "", vfstorage.ErrExists, dst.String()+" is the source")
	}
	dh, err := s.host(op, dst)
	if err != nil {
		return err
	}
	total, err := s.Usage(ctx, src)
	if err != nil {
		return err
	}
	srcRoot, err := s.openFolder(op, src)
	if err != nil {
		return err
	}
	defer srcRoot.Close()

	st := s.state(dst)
	st.mu.Lock()
	defer st.mu.Unlock()
	switch _, err := dh.root.Lstat(folderDir(dst.ID)); {
	case err == nil:
		return vfstorage.Failf(op, "dst", "", vfstorage.ErrExists, dst.String())
	case !errors.Is(err, fs.ErrNotExist):
		return vfstorage.Internal(op, fmt.Errorf("folder %s: %w", dst, err))
	}
	tmp := cloneDir(dst.ID)
	if err := dh.root.RemoveAll(tmp); err != nil {
		return vfstorage.Internal(op, fmt.Errorf("folder %s: removing an earlier clone: %w", dst, err))
	}
	if err := dh.root.MkdirAll(fanOut(dst.ID), dirMode); err != nil {
		return vfstorage.Internal(op, fmt.Errorf("host %s: %w", dh.name, err))
	}
	if err := dh.root.Mkdir(tmp, dirMode); err != nil {
		return vfstorage.Internal(op, fmt.Errorf("folder %s: %w", dst, err))
	}
	placed := false
	defer func() {
		if !placed {
			if err := dh.root.RemoveAll(tmp); err != nil {
				s.log.Warn("removing a failed clone", "folder", dst.String(), "err", err)
			}
		}
	}()
	dstRoot, err := dh.root.OpenRoot(tmp)
	if err != nil {
		return vfstorage.Internal(op, fmt.Errorf("folder %s: %w", dst, err))
	}
	defer dstRoot.Close()

	c := &cloner{ctx: ctx, src: srcRoot, dst: dstRoot, report: progress}
	c.p.BytesTotal, c.p.FilesTotal = total.Bytes, total.Files
	if err := c.copyTree(); err != nil {
		if isContextErr(err) {
			return canceled(op, err)
		}
		return classify(op, "", c.at, err)
	}
	if err := c.syncFS(dstRoot); err != nil {
		return vfstorage.Internal(op, fmt.Errorf("folder %s: syncfs: %w", dst, err))
	}
	if err := dh.root.Rename(tmp, folderDir(dst.ID)); err != nil {
		return vfstorage.Internal(op, fmt.Errorf("folder %s: %w", dst, err))
	}
	placed = true
	if err := syncDir(dh.root, fanOut(dst.ID)); err != nil {
		return vfstorage.Internal(op, fmt.Errorf("folder %s: %w", dst, err))
	}
	st.usage = vfstorage.Usage{Bytes: c.p.BytesDone, Files: c.p.FilesDone}
	st.measured = s.now()
	if progress != nil {
		progress(c.p)
	}
	return nil
}

// cloner copies one tree between two roots.
type cloner struct {
	ctx      context.Context
	src, dst *os.Root
	report   func(vfstorage.CloneProgress)
	p        vfstorage.CloneProgress
	at       string // the path being copied, for errors
	dirs     []dirTimes
}

type dirTimes struct {
	path string
	fi   fs.FileInfo
}

func (c *cloner) copyTree() error {
	err := fs.WalkDir(c.src.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		c.at = p
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != "." {
				return nil // removed while we copy
			}
			return err
		}
		if err := c.ctx.Err(); err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if p == vfstorage.ReservedName {
			return fs.SkipDir
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := c.dst.Mkdir(p, 0o700); err != nil {
				return err
			}
			c.dirs = append(c.dirs, dirTimes{p, fi})
		case d.Type().IsRegular():
			if err := c.copyFile(p); err != nil {
				return err
			}
		case d.Type()&fs.ModeSymlink != 0:
			target, err := c.src.Readlink(p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := c.dst.Symlink(target, p); err != nil {
				return err
			}
			if err := c.chown(p, fi, true); err != nil {
				return err
			}
		default:
			return nil // FIFOs, sockets, devices
		}
		c.p.FilesDone++
		c.progress()
		return nil
	})
	if err != nil {
		return err
	}
	// Directories last, deepest first: copying into them changed their
	// times, and a read-only mode would have refused the copy.
	for i := len(c.dirs) - 1; i >= 0; i-- {
		d := c.dirs[i]
		c.at = d.path
		if err := c.finish(d.path, d.fi); err != nil {
			return err
		}
	}
	return nil
}

func (c *cloner) copyFile(p string) error {
	in, err := c.src.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	// The opened file's own information, not the listing's: the path may
	// have been swapped for something else since.
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() { // swapped since the listing
		return nil
	}
	out, err := c.dst.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	for {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		n, err := io.CopyN(out, in, copyChunk)
		c.p.BytesDone += n
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		c.progress()
	}
	if err := out.Close(); err != nil {
		return err
	}
	return c.finish(p, fi)
}

// finish gives a copied file or directory its source's mode, owner and
// times. The destination tree is not visible to anyone yet, so the
// path-based calls are not racing a session.
func (c *cloner) finish(p string, fi fs.FileInfo) error {
	if err := c.chown(p, fi, false); err != nil {
		return err
	}
	if err := c.dst.Chmod(p, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
		return err
	}
	return c.dst.Chtimes(p, fi.ModTime(), fi.ModTime())
}

// chown copies the owner where the server may: as root, and not on a
// network file system that maps root to nobody (which refuses). Elsewhere
// the copy belongs to the server's user.
func (c *cloner) chown(p string, fi fs.FileInfo, link bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || os.Geteuid() != 0 {
		return nil
	}
	var err error
	if link {
		err = c.dst.Lchown(p, int(st.Uid), int(st.Gid))
	} else {
		err = c.dst.Chown(p, int(st.Uid), int(st.Gid))
	}
	if errors.Is(err, fs.ErrPermission) {
		return nil
	}
	return err
}

func (c *cloner) progress() {
	if c.report != nil {
		c.report(c.p)
	}
}

func (c *cloner) syncFS(root *os.Root) error {
	d, err := root.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}
