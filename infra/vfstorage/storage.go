package vfstorage

import (
	"context"
	"io"

	"github.com/google/uuid"
)

// Ref names one folder: the storage host it lives on and its id.
type Ref struct {
	Host string
	ID   uuid.UUID
}

func (r Ref) String() string { return r.Host + ":" + r.ID.String() }

// HostInfo describes one storage host.
type HostInfo struct {
	// Name is the host's name, as folders refer to it.
	Name string
	// Backend names the mechanism (e.g. "localfs").
	Backend string
	// EnforcesQuota says that the file system itself refuses writes over a
	// folder's quota, including writes from sessions that mount the folder.
	// Without it, quotas hold only for writes through this port.
	EnforcesQuota bool
}

// Storage is the whole port: every storage host a server knows, with the
// folder lifecycle and the file operations on each.
type Storage interface {
	// Hosts lists the configured hosts, sorted by name.
	Hosts() []HostInfo
	Folders
	Files
	Resumable
}

// Folders is the folder lifecycle, what the vfolder commands need. Every
// method is idempotent where the doc says so, so that a command retried
// after a crash can call it again.
type Folders interface {
	// CreateFolder makes an empty folder. Creating a folder that exists
	// already succeeds (idempotent).
	CreateFolder(ctx context.Context, ref Ref) error
	// DeleteFolder removes a folder and all its data ("delete from trash").
	// Deleting a folder that does not exist succeeds (idempotent); a
	// deletion interrupted by a crash is finished by the next call.
	DeleteFolder(ctx context.Context, ref Ref) error
	// CloneFolder copies src's whole tree into the new folder dst, which
	// must not exist (ErrExists); src and dst may be on different hosts of
	// the same backend. dst appears only once the copy is complete: a
	// failed or cancelled clone leaves no dst behind, and a clone interrupted
	// by a crash can simply be started again. progress, if not nil, is
	// called from CloneFolder's goroutine as the copy advances (often: keep
	// it cheap) and once at the end. src may change while it is copied (a
	// session may have it mounted): the copy is of each file as it was read.
	CloneFolder(ctx context.Context, src, dst Ref, progress func(CloneProgress)) error
	// Usage reports how much a folder holds. It may be up to the backend's
	// cache lifetime old for changes made outside this port (by sessions);
	// changes made through the port are reflected at once.
	Usage(ctx context.Context, ref Ref) (Usage, error)
	// RefreshUsage measures the folder now, whatever the backend cached:
	// for when a session that mounted the folder has ended, and for
	// periodic usage reports.
	RefreshUsage(ctx context.Context, ref Ref) (Usage, error)
	// MountSource is the folder's directory on the host's file system, for
	// bind-mounting it into a session's container. It is for mounting only:
	// server-side file access must go through Files, which is safe against
	// symbolic links.
	MountSource(ref Ref) (string, error)
}

// Files are the operations on paths inside a folder, what the file API
// needs. Paths are relative to the folder's root (see CleanPath).
type Files interface {
	// ListFiles lists one directory in name order, a page at a time.
	ListFiles(ctx context.Context, ref Ref, dir string, opts ListOptions) (Listing, error)
	// Stat describes one path without following a final symbolic link.
	Stat(ctx context.Context, ref Ref, path string) (FileInfo, error)
	// Mkdir makes a directory. Without parents the parent must exist and
	// the directory must not (ErrExists); with parents it makes the missing
	// ancestors too and succeeds when the directory exists already.
	Mkdir(ctx context.Context, ref Ref, path string, parents bool) error
	// Remove deletes a file, a symbolic link (not its target) or a
	// directory; a non-empty directory needs recursive (else ErrNotEmpty).
	// The folder's root cannot be removed.
	Remove(ctx context.Context, ref Ref, path string, recursive bool) error
	// Rename moves a file or directory within the folder. The destination
	// must not exist (ErrExists); its parent must.
	Rename(ctx context.Context, ref Ref, from, to string) error
	// Upload writes r's bytes to path, replacing a file that is there. The
	// file appears complete or not at all: the bytes go to a staging file
	// in the same folder, which is synced and then renamed into place.
	// Over a limit of opts the upload stops with ErrTooLarge or
	// ErrQuotaExceeded and leaves nothing behind. Concurrent uploads to one
	// path each replace the file whole; the last to finish wins.
	Upload(ctx context.Context, ref Ref, path string, r io.Reader, opts UploadOptions) (FileInfo, error)
	// Download opens a regular file for reading. The reader seeks (for HTTP
	// Range requests) and must be closed.
	Download(ctx context.Context, ref Ref, path string) (ReadSeekCloser, FileInfo, error)
}

// ReadSeekCloser is an open file being downloaded. Backends on a file
// system return an *os.File, so that copying it to a socket can use
// sendfile.
type ReadSeekCloser interface {
	io.Reader
	io.Seeker
	io.ReaderAt
	io.Closer
}
