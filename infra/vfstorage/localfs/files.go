package localfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

// ListFiles lists one page of a directory. It reads the directory's names
// (no stat), sorts them, and stats only the page's entries, each relative
// to the open directory: one getdents pass plus one fstatat per entry.
func (s *Storage) ListFiles(ctx context.Context, ref vfstorage.Ref, dir string, opts vfstorage.ListOptions) (vfstorage.Listing, error) {
	const op = "vfstorage.list-files"
	clean, err := vfstorage.CleanPath(op, "dir", dir)
	if err != nil {
		return vfstorage.Listing{}, err
	}
	after := ""
	if opts.After != "" {
		if after, err = vfstorage.CleanName(op, "after", opts.After); err != nil {
			return vfstorage.Listing{}, err
		}
	}
	limit := opts.Limit
	switch {
	case limit == 0:
		limit = vfstorage.DefaultListLimit
	case limit < 0 || limit > vfstorage.MaxListLimit:
		return vfstorage.Listing{}, vfstorage.Failf(op, "limit", "", vfstorage.ErrInvalid, fmt.Sprintf("%d: must be between 1 and %d", opts.Limit, vfstorage.MaxListLimit))
	}
	root, err := s.openFolder(op, ref)
	if err != nil {
		return vfstorage.Listing{}, err
	}
	defer root.Close()
	d, err := openDir(op, "dir", root, clean)
	if err != nil {
		return vfstorage.Listing{}, err
	}
	defer d.Close()
	names, err := readNames(d)
	if err != nil {
		return vfstorage.Listing{}, classify(op, "dir", clean, err)
	}
	if clean == "." {
		names = slices.DeleteFunc(names, func(n string) bool { return n == vfstorage.ReservedName })
	}
	slices.Sort(names)
	start := 0
	if after != "" {
		start, _ = slices.BinarySearch(names, after)
		if start < len(names) && names[start] == after {
			start++
		}
	}
	end := min(start+limit, len(names))
	var l vfstorage.Listing
	if end < len(names) {
		l.Next = names[end-1]
	}
	l.Entries = make([]vfstorage.FileInfo, 0, end-start)
	for i, name := range names[start:end] {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return vfstorage.Listing{}, canceled(op, err)
			}
		}
		fi, err := d.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since it was listed
		}
		if err != nil {
			return vfstorage.Listing{}, classify(op, "dir", path.Join(clean, name), err)
		}
		l.Entries = append(l.Entries, vfstorage.InfoOf(fi))
	}
	return l, nil
}

// openDir opens a directory of the folder as a root of its own, following
// symbolic links that stay inside the folder.
func openDir(op, field string, root *os.Root, dir string) (*os.Root, error) {
	fi, err := root.Stat(dir)
	if err != nil {
		return nil, classify(op, field, dir, err)
	}
	if !fi.IsDir() {
		return nil, vfstorage.Fail(op, field, dir, vfstorage.ErrNotDir)
	}
	d, err := root.OpenRoot(dir)
	if err != nil {
		// Replaced by a file since the Stat: os.Root reports that without
		// an errno, which classify would take for an escape.
		if fi, serr := root.Stat(dir); serr == nil && !fi.IsDir() {
			return nil, vfstorage.Fail(op, field, dir, vfstorage.ErrNotDir)
		}
		return nil, classify(op, field, dir, err)
	}
	return d, nil
}

func readNames(d *os.Root) ([]string, error) {
	f, err := d.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// Stat describes one path without following a final symbolic link.
func (s *Storage) Stat(ctx context.Context, ref vfstorage.Ref, p string) (vfstorage.FileInfo, error) {
	const op = "vfstorage.stat"
	clean, err := vfstorage.CleanPath(op, "path", p)
	if err != nil {
		return vfstorage.FileInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return vfstorage.FileInfo{}, canceled(op, err)
	}
	root, err := s.openFolder(op, ref)
	if err != nil {
		return vfstorage.FileInfo{}, err
	}
	defer root.Close()
	fi, err := root.Lstat(clean)
	if err != nil {
		return vfstorage.FileInfo{}, classify(op, "path", clean, err)
	}
	return vfstorage.InfoOf(fi), nil
}

// Mkdir makes a directory, and with parents its missing ancestors.
func (s *Storage) Mkdir(ctx context.Context, ref vfstorage.Ref, p string, parents bool) error {
	const op = "vfstorage.mkdir"
	clean, err := vfstorage.CleanPath(op, "path", p)
	if err != nil {
		return err
	}
	if clean == "." {
		if parents {
			return nil
		}
		return vfstorage.Failf(op, "path", "", vfstorage.ErrExists, "the folder's root")
	}
	if err := ctx.Err(); err != nil {
		return canceled(op, err)
	}
	root, err := s.openFolder(op, ref)
	if err != nil {
		return err
	}
	defer root.Close()
	st := s.state(ref)
	st.mu.Lock()
	defer st.mu.Unlock()
	if !parents {
		if err := root.Mkdir(clean, dirMode); err != nil {
			return classify(op, "path", clean, err)
		}
		st.add(0, 1)
		return nil
	}
	return makeDirs(op, root, st, clean)
}

// makeDirs makes dir and its missing ancestors, one level at a time to
// count what is made in the folder's usage; st.mu must be held.
func makeDirs(op string, root *os.Root, st *folderState, clean string) error {
	for i := 0; i <= len(clean); i++ {
		if i < len(clean) && clean[i] != '/' {
			continue
		}
		prefix := clean[:i]
		err := root.Mkdir(prefix, dirMode)
		switch {
		case err == nil:
			st.add(0, 1)
			continue
		case !errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTEMPTY):
			return classify(op, "path", prefix, err)
		}
		fi, err := root.Stat(prefix) // a link to a directory inside the folder will do
		if err != nil {
			return classify(op, "path", prefix, err)
		}
		if !fi.IsDir() {
			if i == len(clean) {
				return vfstorage.Failf(op, "path", prefix, vfstorage.ErrExists, "and is not a directory")
			}
			return vfstorage.Fail(op, "path", prefix, vfstorage.ErrNotDir)
		}
	}
	return nil
}

// Remove deletes a file, link or directory; recursive for a non-empty
// directory.
func (s *Storage) Remove(ctx context.Context, ref vfstorage.Ref, p string, recursive bool) error {
	const op = "vfstorage.remove"
	clean, err := vfstorage.CleanPath(op, "path", p)
	if err != nil {
		return err
	}
	if clean == "." {
		return vfstorage.Failf(op, "path", p, vfstorage.ErrInvalidPath, "is the folder's root")
	}
	root, err := s.openFolder(op, ref)
	if err != nil {
		return err
	}
	defer root.Close()
	st := s.state(ref)
	st.mu.Lock()
	defer st.mu.Unlock()
	fi, err := root.Lstat(clean)
	if err != nil {
		return classify(op, "path", clean, err)
	}
	if !fi.IsDir() || !recursive {
		if err := root.Remove(clean); err != nil {
			return classify(op, "path", clean, err)
		}
		switch {
		case fi.IsDir():
			st.add(0, -1)
		case fi.Mode().IsRegular() && nlink(fi) > 1:
			st.forget() // another link may keep the bytes
		case fi.Mode().IsRegular():
			st.add(-fi.Size(), -1)
		default:
			st.add(0, -1)
		}
		return nil
	}
	// Measure what goes (so the cached usage stays exact), then remove.
	var sub vfstorage.Usage
	if !st.measured.IsZero() {
		if sub, err = walkUsage(ctx, root, clean); err != nil {
			return classify(op, "path", clean, err)
		}
	}
	if err := root.RemoveAll(clean); err != nil {
		st.forget()
		return classify(op, "path", clean, err)
	}
	st.add(-sub.Bytes, -sub.Files-1)
	return nil
}

// Rename moves a file or directory within the folder; the destination must
// not exist.
func (s *Storage) Rename(ctx context.Context, ref vfstorage.Ref, from, to string) error {
	const op = "vfstorage.rename"
	src, err := vfstorage.CleanPath(op, "from", from)
	if err != nil {
		return err
	}
	dst, err := vfstorage.CleanPath(op, "to", to)
	if err != nil {
		return err
	}
	switch {
	case src == ".":
		return vfstorage.Failf(op, "from", from, vfstorage.ErrInvalidPath, "is the folder's root")
	case dst == ".":
		return vfstorage.Failf(op, "to", to, vfstorage.ErrInvalidPath, "is the folder's root")
	case strings.HasPrefix(dst, src+"/"):
		return vfstorage.Failf(op, "to", to, vfstorage.ErrInvalidPath, "is inside "+from)
	}
	if err := ctx.Err(); err != nil {
		return canceled(op, err)
	}
	root, err := s.openFolder(op, ref)
	if err != nil {
		return err
	}
	defer root.Close()
	st := s.state(ref)
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, err := root.Lstat(src); err != nil {
		return classify(op, "from", src, err)
	}
	switch _, err := root.Lstat(dst); {
	case err == nil:
		return vfstorage.Fail(op, "to", dst, vfstorage.ErrExists)
	case !errors.Is(err, fs.ErrNotExist):
		return classify(op, "to", dst, err)
	}
	if err := root.Rename(src, dst); err != nil {
		return classify(op, "to", dst, err)
	}
	return nil
}

func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// syncDir makes a directory's entries durable (after a rename into it).
func syncDir(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
