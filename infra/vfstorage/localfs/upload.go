package localfs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"strconv"
	"sync"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

// copyChunk is how much an upload or a clone copies between two looks at
// its context (and progress reports).
const copyChunk = 8 << 20

// Upload streams r into a staging file in the folder's ReservedName
// directory, syncs it, and renames it over path (hard-links it there with
// NoReplace, which fails if something took the name meanwhile). Staging in
// the folder itself keeps the rename on one file system (and, with project
// quotas, inside the folder's project). The quota is checked twice: the
// stream stops once it passes the room the folder had when it started,
// and the commit, under the folder's lock, checks again against usage
// then, so concurrent uploads cannot together pass it.
func (s *Storage) Upload(ctx context.Context, ref vfstorage.Ref, p string, r io.Reader, opts vfstorage.UploadOptions) (vfstorage.FileInfo, error) {
	const op = "vfstorage.upload"
	clean, err := vfstorage.CleanPath(op, "path", p)
	if err != nil {
		return vfstorage.FileInfo{}, err
	}
	switch {
	case clean == ".":
		return vfstorage.FileInfo{}, vfstorage.Failf(op, "path", p, vfstorage.ErrIsDir, "(the folder's root)")
	case opts.MaxSize < 0:
		return vfstorage.FileInfo{}, vfstorage.Failf(op, "max_size", "", vfstorage.ErrInvalid, "must not be negative")
	case opts.Quota < 0:
		return vfstorage.FileInfo{}, vfstorage.Failf(op, "quota", "", vfstorage.ErrInvalid, "must not be negative")
	}
	root, err := s.openFolder(op, ref)
	if err != nil {
		return vfstorage.FileInfo{}, err
	}
	defer root.Close()
	st := s.state(ref)

	// Refuse at once what can never be put in place.
	parent := path.Dir(clean)
	if fi, err := root.Stat(parent); err != nil {
		return vfstorage.FileInfo{}, classify(op, "path", parent, err)
	} else if !fi.IsDir() {
		return vfstorage.FileInfo{}, vfstorage.Fail(op, "path", parent, vfstorage.ErrNotDir)
	}
	old, err := existing(op, root, clean, opts.NoReplace)
	if err != nil {
		return vfstorage.FileInfo{}, err
	}

	limit := int64(math.MaxInt64)
	if opts.MaxSize > 0 {
		limit = opts.MaxSize
	}
	if opts.Quota > 0 {
		st.mu.Lock()
		u, err := s.measure(ctx, op, root, st, s.cfg.UsageTTL)
		st.mu.Unlock()
		if err != nil {
			return vfstorage.FileInfo{}, err
		}
		limit = min(limit, max(0, opts.Quota-u.Bytes+old.bytes))
	}

	if err := ensureStaging(root); err != nil {
		return vfstorage.FileInfo{}, classify(op, "path", clean, err)
	}
	tmp := vfstorage.ReservedName + "/" + rand.Text() + ".part"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return vfstorage.FileInfo{}, classify(op, "path", clean, err)
	}
	placed := false
	defer func() {
		f.Close() // a second Close after the explicit one is harmless
		if !placed {
			if err := root.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
				s.log.Warn("removing an upload staging file", "folder", ref.String(), "err", err)
			}
		}
	}()

	n, over, err := copyLimited(ctx, f, r, limit)
	switch {
	case over && opts.MaxSize > 0 && n > opts.MaxSize:
		return vfstorage.FileInfo{}, vfstorage.Failf(op, "path", clean, vfstorage.ErrTooLarge, "is over "+strconv.FormatInt(opts.MaxSize, 10)+" bytes")
	case over:
		return vfstorage.FileInfo{}, vfstorage.Failf(op, "path", clean, vfstorage.ErrQuotaExceeded, "would take the folder over its quota of "+strconv.FormatInt(opts.Quota, 10)+" bytes")
	case err != nil && isContextErr(err):
		return vfstorage.FileInfo{}, canceled(op, err)
	case err != nil && isWriteErr(err, f):
		return vfstorage.FileInfo{}, classify(op, "path", clean, err)
	case err != nil:
		return vfstorage.FileInfo{}, &domain.Error{Op: op, Kind: domain.KindInvalid, Field: "body", Message: "reading the upload", Err: err}
	}
	if err := f.Sync(); err != nil {
		return vfstorage.FileInfo{}, classify(op, "path", clean, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return vfstorage.FileInfo{}, vfstorage.Internal(op, err)
	}
	if err := f.Close(); err != nil {
		return vfstorage.FileInfo{}, classify(op, "path", clean, err)
	}

	// Commit, under the folder's lock so that the quota check and the
	// usage delta see every other write through the port.
	st.mu.Lock()
	defer st.mu.Unlock()
	if old, err = existing(op, root, clean, opts.NoReplace); err != nil {
		return vfstorage.FileInfo{}, err
	}
	if opts.Quota > 0 {
		u, err := s.measure(ctx, op, root, st, math.MaxInt64)
		if err != nil {
			return vfstorage.FileInfo{}, err
		}
		if u.Bytes-old.bytes+n > opts.Quota {
			return vfstorage.FileInfo{}, vfstorage.Failf(op, "path", clean, vfstorage.ErrQuotaExceeded, "would take the folder over its quota of "+strconv.FormatInt(opts.Quota, 10)+" bytes")
		}
	}
	if opts.NoReplace {
		err = root.Link(tmp, clean)
	} else {
		err = root.Rename(tmp, clean)
	}
	if err != nil {
		return vfstorage.FileInfo{}, classify(op, "path", clean, err)
	}
	placed = !opts.NoReplace // a link leaves the staging name to remove
	if old.shared {
		st.forget()
	}
	st.add(n-old.bytes, 1-old.files)
	if err := syncDir(root, parent); err != nil {
		return vfstorage.FileInfo{}, vfstorage.Internal(op, fmt.Errorf("the file is in place but may not be durable: %w", err))
	}
	info := vfstorage.InfoOf(fi)
	info.Name = path.Base(clean)
	return info, nil
}

// replaced is what an upload replaces at its path.
type replaced struct {
	bytes  int64 // size, if a regular file the folder holds once
	files  int64 // 1 if there is an entry
	shared bool  // a regular file with other hard links: its bytes may stay
}

func existing(op string, root *os.Root, clean string, noReplace bool) (replaced, error) {
	fi, err := root.Lstat(clean)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return replaced{}, nil
	case err != nil:
		return replaced{}, classify(op, "path", clean, err)
	case fi.IsDir():
		return replaced{}, vfstorage.Fail(op, "path", clean, vfstorage.ErrIsDir)
	case noReplace:
		return replaced{}, vfstorage.Fail(op, "path", clean, vfstorage.ErrExists)
	case fi.Mode().IsRegular() && nlink(fi) > 1:
		return replaced{files: 1, shared: true}, nil
	case fi.Mode().IsRegular():
		return replaced{bytes: fi.Size(), files: 1}, nil
	}
	return replaced{files: 1}, nil
}

// copyLimited copies src to dst until EOF, or until it has copied one byte
// more than limit (over). It copies in chunks, looking at ctx between them.
// From a file, each chunk goes through (*os.File).ReadFrom, which moves
// the bytes in the kernel (copy_file_range); from anything else (an HTTP
// body) through a pooled 128 KiB buffer: a quarter of the system calls of
// io.Copy's 32 KiB, still small enough to stay in the CPU's cache (1 MiB
// measured no better).
func copyLimited(ctx context.Context, dst *os.File, src io.Reader, limit int64) (n int64, over bool, err error) {
	_, isFile := src.(*os.File)
	var buf []byte
	if !isFile {
		bp := copyBuffers.Get().(*[]byte)
		defer copyBuffers.Put(bp)
		buf = *bp
	}
	for {
		if err := ctx.Err(); err != nil {
			return n, false, err
		}
		want := int64(copyChunk)
		if left := limit - n; left < want {
			want = left + 1
		}
		var m int64
		if isFile {
			m, err = io.CopyN(dst, src, want)
		} else {
			m, err = io.CopyBuffer(writerOnly{dst}, io.LimitReader(src, want), buf)
			if err == nil && m < want {
				err = io.EOF
			}
		}
		n += m
		switch {
		case n > limit:
			return n, true, nil
		case err == io.EOF:
			return n, false, nil
		case err != nil:
			return n, false, err
		}
	}
}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 128<<10); return &b }}

// writerOnly hides (*os.File).ReadFrom, so that io.CopyBuffer uses the
// buffer it is given.
type writerOnly struct{ io.Writer }

// isWriteErr tells a failure to write f (a full disk) from a failure to
// read the upload: f's errors name f.
func isWriteErr(err error, f *os.File) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Path == f.Name()
}

// ensureStaging makes the folder's staging directory. Something else in
// its place (a session can make anything there) is removed: the name is
// the backend's.
func ensureStaging(root *os.Root) error {
	err := root.Mkdir(vfstorage.ReservedName, 0o700)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := root.Lstat(vfstorage.ReservedName)
	if err != nil || fi.IsDir() {
		return err
	}
	if err := root.Remove(vfstorage.ReservedName); err != nil {
		return err
	}
	return root.Mkdir(vfstorage.ReservedName, 0o700)
}
