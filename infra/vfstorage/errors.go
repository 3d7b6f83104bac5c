package vfstorage

import (
	"errors"
	"strconv"

	"github.com/cairnhq/cairn/domain"
)

// Reasons, found in the chain of every error the port returns
// (errors.Is(err, vfstorage.ErrNotFound)). Each has one domain kind, which
// is the kind of the *domain.Error that carries it (KindOfReason).
var (
	ErrInvalidPath   = errors.New("invalid path")                  // KindInvalid
	ErrUnknownHost   = errors.New("unknown storage host")          // KindInvalid
	ErrInvalid       = errors.New("invalid argument")              // KindInvalid
	ErrNotFound      = errors.New("no such file or directory")     // KindNotFound
	ErrNoFolder      = errors.New("folder data not found")         // KindNotFound
	ErrExists        = errors.New("already exists")                // KindConflict
	ErrNotDir        = errors.New("not a directory")               // KindConflict
	ErrIsDir         = errors.New("is a directory")                // KindConflict
	ErrNotEmpty      = errors.New("directory not empty")           // KindConflict
	ErrNotRegular    = errors.New("not a regular file")            // KindConflict
	ErrTooLarge      = errors.New("over the size limit")           // KindTooLarge
	ErrQuotaExceeded = errors.New("over the quota")                // KindQuotaExceeded
	ErrPermission    = errors.New("permission denied on storage")  // KindForbidden
	ErrNoSpace       = errors.New("no space left on storage host") // KindUnavailable
	// ErrOffset: a resumable upload's chunk was sent for another offset
	// than the stored one (the client asks for the offset and resumes).
	ErrOffset = errors.New("upload offset mismatch") // KindConflict
	// ErrChecksum: a chunk's bytes do not match the checksum sent with
	// them; the chunk was discarded.
	ErrChecksum = errors.New("checksum mismatch") // KindInvalid
)

var reasonKinds = map[error]domain.Kind{
	ErrInvalidPath:   domain.KindInvalid,
	ErrUnknownHost:   domain.KindInvalid,
	ErrInvalid:       domain.KindInvalid,
	ErrNotFound:      domain.KindNotFound,
	ErrNoFolder:      domain.KindNotFound,
	ErrExists:        domain.KindConflict,
	ErrNotDir:        domain.KindConflict,
	ErrIsDir:         domain.KindConflict,
	ErrNotEmpty:      domain.KindConflict,
	ErrNotRegular:    domain.KindConflict,
	ErrTooLarge:      domain.KindTooLarge,
	ErrQuotaExceeded: domain.KindQuotaExceeded,
	ErrPermission:    domain.KindForbidden,
	ErrNoSpace:       domain.KindUnavailable,
	ErrOffset:        domain.KindConflict,
	ErrChecksum:      domain.KindInvalid,
}

// KindOfReason is the domain kind of one of the reasons above;
// KindInternal for anything else.
func KindOfReason(reason error) domain.Kind {
	if k, ok := reasonKinds[reason]; ok {
		return k
	}
	return domain.KindInternal
}

// Fail builds the error of operation op (e.g. "vfstorage.upload") about
// path (folder-relative, may be empty) of field (the input it came from:
// "path", "dir", "from", "to"...) for reason, one of the sentinels above.
// The error's kind is the reason's; field is recorded for KindInvalid only.
func Fail(op, field, path string, reason error) error {
	e := &domain.Error{Op: op, Kind: KindOfReason(reason), Err: reason}
	if e.Kind == domain.KindInvalid {
		e.Field = field
	}
	if path != "" {
		e.Message = strconv.Quote(path)
	}
	return e
}

// Failf is Fail with an explanation, e.g. "leads outside the folder".
func Failf(op, field, path string, reason error, detail string) error {
	err := Fail(op, field, path, reason).(*domain.Error)
	if err.Message != "" {
		err.Message += " " + detail
	} else {
		err.Message = detail
	}
	return err
}

// Internal wraps an unexpected failure (which may name host directories:
// the HTTP layer does not show internal details to clients).
func Internal(op string, cause error) error {
	return &domain.Error{Op: op, Kind: domain.KindInternal, Err: cause}
}
