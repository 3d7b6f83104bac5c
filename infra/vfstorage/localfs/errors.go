package localfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

// classify translates an error of an os.Root operation on path (given by
// the caller as input field) into the port's error. os.Root reports a path
// that leads outside the root (through a symbolic link: CleanPath already
// refused ".." and absolute paths) with an error that is not an errno, and
// that is the only such error it returns for the paths and modes this
// package passes, so any other error without an errno is an escape.
func classify(op, field, path string, err error) error {
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	switch {
	case errors.Is(err, syscall.ENOTEMPTY): // before ErrExist, which it matches
		return vfstorage.Fail(op, field, path, vfstorage.ErrNotEmpty)
	case errors.Is(err, fs.ErrNotExist):
		return vfstorage.Fail(op, field, path, vfstorage.ErrNotFound)
	case errors.Is(err, fs.ErrExist):
		return vfstorage.Fail(op, field, path, vfstorage.ErrExists)
	case errors.Is(err, syscall.ENOTDIR):
		return vfstorage.Failf(op, field, path, vfstorage.ErrNotDir, "(or one of its parents)")
	case errors.Is(err, syscall.EISDIR):
		return vfstorage.Fail(op, field, path, vfstorage.ErrIsDir)
	case errors.Is(err, fs.ErrPermission):
		return vfstorage.Fail(op, field, path, vfstorage.ErrPermission)
	case errors.Is(err, syscall.EDQUOT):
		return vfstorage.Fail(op, field, path, vfstorage.ErrQuotaExceeded)
	case errors.Is(err, syscall.ENOSPC):
		return vfstorage.Fail(op, field, path, vfstorage.ErrNoSpace)
	case errors.Is(err, syscall.ELOOP):
		return vfstorage.Failf(op, field, path, vfstorage.ErrInvalidPath, "has too many symbolic links")
	case errors.Is(err, syscall.ENAMETOOLONG):
		return vfstorage.Failf(op, field, path, vfstorage.ErrInvalidPath, "is too long")
	case errors.Is(err, syscall.EINVAL):
		return vfstorage.Failf(op, field, path, vfstorage.ErrInvalidPath, "is not possible here (a directory moved into itself?)")
	case errors.Is(err, os.ErrClosed):
		return vfstorage.Internal(op, err)
	case isContextErr(err):
		return canceled(op, err)
	case !errors.As(err, &errno):
		return vfstorage.Failf(op, field, path, vfstorage.ErrInvalidPath, "leads outside the folder")
	}
	return vfstorage.Internal(op, err)
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// canceled is the error of an operation whose context ended: unavailable
// (try again), with the context's error in its chain.
func canceled(op string, err error) error {
	return &domain.Error{Op: op, Kind: domain.KindUnavailable, Message: "cancelled", Err: err}
}
