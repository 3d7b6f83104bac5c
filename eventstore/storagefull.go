package eventstore

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/cairnhq/cairn/domain"
)

// ErrStorageFull: the disk (or database) that holds the store has no room
// left. Writes fail until room is made; reads keep working. Every backend
// returns it as a domain KindUnavailable error (StorageFull), so the HTTP
// API answers 503 and callers that retry what is unavailable retry it.
var ErrStorageFull = errors.New("the data disk is full")

// StorageFull wraps cause, a backend's own disk-full error recognised by
// its error code (SQLITE_FULL, SQLSTATE 53100, ENOSPC), as the
// KindUnavailable error that says so: errors.Is matches ErrStorageFull and
// domain.ErrUnavailable, and errors.As still reaches the driver's error.
func StorageFull(op string, cause error) error {
	if errors.Is(cause, ErrStorageFull) {
		return cause // translated already, further down
	}
	return &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: &storageFullError{cause: cause}}
}

// IsStorageFull reports whether err says the disk is full: a translated
// error (StorageFull) or an operating system's ENOSPC or EDQUOT from a
// file write.
func IsStorageFull(err error) bool {
	return errors.Is(err, ErrStorageFull) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// FileError wraps the error of a file operation with op at an adapter's
// boundary: a full disk (ENOSPC, EDQUOT) becomes StorageFull(op, err),
// anything else "op: err"; nil stays nil.
func FileError(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case IsStorageFull(err):
		return StorageFull(op, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// storageFullError carries the driver's error under ErrStorageFull.
type storageFullError struct{ cause error }

func (e *storageFullError) Error() string {
	return ErrStorageFull.Error() + " (" + e.cause.Error() + ")"
}

func (e *storageFullError) Unwrap() error { return e.cause }

// Is makes errors.Is(err, ErrStorageFull) true.
func (e *storageFullError) Is(target error) bool { return target == ErrStorageFull }
