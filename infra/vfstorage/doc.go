// Package vfstorage is the storage port of virtual folders: where a
// folder's files live, and the operations the vfolder commands and the file
// API perform on them. Backends live in sub-packages named after their
// mechanism (localfs: directories on a mounted file system); storagetest
// holds the conformance suite every backend passes.
//
// # Hosts and folders
//
// A storage host is a named volume (e.g. "local", "nfs1"). A folder is
// addressed by a Ref: the host it lives on and its id (the vfolder's id).
// Which host a folder is on, its quota, its owner and its permissions are
// the aggregate's business; the port only stores bytes.
//
// # Paths
//
// Every path inside a folder is slash-separated and relative to the
// folder's root. CleanPath is the one gate all of them go through: it
// refuses absolute paths, ".." components (even when they would stay
// inside), NUL bytes, names that are not UTF-8, over-long paths, and the
// ReservedName at the top of the folder, which backends keep for their own
// bookkeeping (upload staging). "", "." and "/"-free equivalents of the
// root name the folder itself. Backends must also refuse to follow a
// symbolic link out of the folder, however and whenever it appears
// (localfs resolves every path with os.Root).
//
// # Errors
//
// Every error is a *domain.Error, so callers branch on domain kinds; its
// chain also holds one of this package's sentinels (ErrInvalidPath,
// ErrNotFound, ErrExists, ErrNotDir, ErrIsDir, ErrNotEmpty, ErrTooLarge,
// ErrQuotaExceeded, ...) for callers that need the finer reason. Messages
// name folder-relative paths only, never a host's directory.
//
// # Usage and quotas
//
// Usage is measured per folder (bytes of regular files, number of
// entries). A backend either enforces quotas itself (a file system with
// project quotas) or, like localfs, only checks them on writes through this
// port: HostInfo.EnforcesQuota says which. UploadOptions carries the limits
// an upload must respect; the caller decides them from the folder's quota
// and any wider quota scope (user, project).
//
// # Resumable uploads
//
// Resumable makes a file out of several requests (the HTTP API's tus
// uploads): an upload is created with its length, which counts in the
// folder's Usage (and so against its quota) from that moment, receives
// chunks appended at the stored offset (optionally checked against a
// sha1 or sha256 digest, kept only whole when checked), and is put at its
// path atomically with its last byte. Uploads live on the folder's own
// storage host, survive a restart, and expire after a lifetime without a
// byte.
//
// # Orphan directories
//
// A backend may also implement Collector: it lists a host's folder
// directories and sets aside (to the host's LostAndFound) those that the
// orphan collector (commands/vfolderorphans) finds no folder for.
package vfstorage
