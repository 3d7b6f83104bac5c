package vfstorage

import (
	"io/fs"
	"time"
)

// FileType is the kind of a directory entry.
type FileType string

// The file types a listing reports.
const (
	TypeFile    FileType = "file"
	TypeDir     FileType = "dir"
	TypeSymlink FileType = "symlink"
	TypeOther   FileType = "other" // a FIFO, socket or device node made inside a session
)

// TypeOf is the FileType of a file mode.
func TypeOf(m fs.FileMode) FileType {
	switch {
	case m.IsRegular():
		return TypeFile
	case m.IsDir():
		return TypeDir
	case m&fs.ModeSymlink != 0:
		return TypeSymlink
	default:
		return TypeOther
	}
}

// FileInfo describes one entry of a folder.
type FileInfo struct {
	// Name is the entry's name (the last element of its path; "." for the
	// folder's root).
	Name string
	Type FileType
	// Size is the length in bytes of a regular file, and what the file
	// system says for other types.
	Size int64
	// Mode holds the permission bits (and setuid, setgid, sticky).
	Mode    fs.FileMode
	ModTime time.Time
}

// InfoOf converts an fs.FileInfo.
func InfoOf(fi fs.FileInfo) FileInfo {
	return FileInfo{
		Name:    fi.Name(),
		Type:    TypeOf(fi.Mode()),
		Size:    fi.Size(),
		Mode:    fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky),
		ModTime: fi.ModTime(),
	}
}

// Limits of one page of a listing.
const (
	DefaultListLimit = 1000
	MaxListLimit     = 10000
)

// ListOptions selects one page of a directory listing.
type ListOptions struct {
	// After is the name the previous page ended with (Listing.Next); the
	// page starts with the first name after it. Empty: from the start.
	After string
	// Limit is the most entries in the page: 0 means DefaultListLimit;
	// more than MaxListLimit is invalid.
	Limit int
}

// Listing is one page of a directory, sorted by name (byte order).
type Listing struct {
	Entries []FileInfo
	// Next is the cursor of the next page (ListOptions.After), empty on the
	// last page. Paging is stable: an entry that exists for the whole
	// listing is returned exactly once.
	Next string
}

// UploadOptions bounds an upload. A zero limit means no limit.
type UploadOptions struct {
	// MaxSize is the largest file accepted, in bytes; a larger upload fails
	// with ErrTooLarge (domain.KindTooLarge).
	MaxSize int64
	// Quota is the most bytes the folder may hold once the upload replaced
	// any file at its path; beyond it the upload fails with
	// ErrQuotaExceeded (domain.KindQuotaExceeded). The check is made while
	// the bytes stream in and again, exactly, when the file is put in place,
	// against the backend's usage accounting, so concurrent uploads to one
	// folder cannot together exceed it. A caller with a wider quota scope
	// (user, project) passes the smaller of the folder's quota and the
	// folder's usage plus what the scope has left.
	Quota int64
	// NoReplace refuses to replace an existing file (ErrExists).
	NoReplace bool
}

// Usage is how much a folder holds.
type Usage struct {
	// Bytes is the sum of the sizes of its regular files (a file with
	// several hard links in the folder counts once), plus the full length
	// of every resumable upload in progress (reserved from its creation).
	Bytes int64
	// Files is the number of entries of every type under the root (files,
	// directories, symbolic links...), the root excluded.
	Files int64
}

// CloneProgress is how far a clone is. The totals are the source's usage
// when the clone started; the copy may end above them if the source grew.
type CloneProgress struct {
	BytesDone, BytesTotal int64
	FilesDone, FilesTotal int64
}
