package vfstorage

import (
	"context"
	"time"
)

// FolderDir is a folder directory found on a storage host, with the time
// its directory last changed (for an empty one: when it was made).
type FolderDir struct {
	Ref     Ref
	ModTime time.Time
}

// Collector is what a backend offers to collect the folder directories
// that no folder owns (a create that crashed after making its directory
// and before writing its event). It is optional: a backend without it
// has no orphans collected.
type Collector interface {
	// FolderDirs calls fn for every folder directory of host (not for
	// work in progress such as a clone being copied). It stops at the
	// first error fn returns, and returns it.
	FolderDirs(ctx context.Context, host string, fn func(FolderDir) error) error
	// SetAside moves a folder directory out of the folders into the host's
	// LostAndFound directory, where an operator may inspect it or remove
	// it; it returns the name it got there. A folder that is not there
	// is ErrNoFolder.
	SetAside(ctx context.Context, ref Ref) (string, error)
}

// LostAndFound is the directory of each storage host where SetAside puts
// folder directories that no folder owns. It starts with a dot so that it
// never collides with a backend's folder layout, nor with the file
// system's own lost+found at the root of a mount.
const LostAndFound = ".cairn-lost+found"
