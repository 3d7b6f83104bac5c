// Package localfs is the vfstorage backend that keeps folders as
// directories on a file system mounted on the server: a local disk, or NFS
// or CephFS mounted at the same path on every node (a storage host is then
// just another path). Hosts are configured as "name:path" (Config, Hosts).
//
// # Layout
//
// A folder's data is <host>/<last two hex digits of its id>/<id>. The
// fan-out uses the last digits because folder ids are UUIDv7, whose first
// digits are a timestamp; it keeps each directory of the host small at
// millions of folders. <folder>/.cairn-staging (vfstorage.ReservedName)
// holds uploads in progress; <host>/<fan-out>/.clone-<id> and
// .delete-<id> are a clone being copied and a folder being deleted.
// <host>/.cairn-lost+found (vfstorage.LostAndFound) receives the folder
// directories that no folder owns (SetAside, for the orphan collector,
// commands/vfolderorphans); FolderDirs lists a host's folder directories.
//
// # Safety
//
// Every access goes through os.Root: the host directory is opened once,
// each operation opens the folder beneath it, and the kernel resolves each
// path one component at a time (openat with O_NOFOLLOW, symbolic links
// resolved by Go inside the root), so no path — whatever links a session
// makes, and even while it swaps them during the operation — reaches
// outside the folder. Links that stay inside the folder are followed.
// Downloads open regular files only (no FIFO, no device node).
//
// # Uploads
//
// An upload streams into a staging file in the folder (same file system,
// and same project for project quotas), bounded by the size limit and by
// the room the quota leaves; it is fsynced, then renamed over the target
// under the folder's lock after a second, exact quota check, and the
// directory is fsynced. A failed, refused or cancelled upload removes its
// staging file; one whose process died is removed by a later usage walk
// once it is older than Config.StagingMaxAge.
//
// Resumable uploads (vfstorage.Resumable) are kept in
// <folder>/.cairn-staging/resumable: <id>.json describes one (written once,
// atomically), <id> holds its bytes so far, whose size is the offset;
// every chunk is fsynced before it is acknowledged. Their lengths count in
// the folder's usage from creation. Config.UploadTTL after its last byte
// an upload expires: RunUploadExpiry removes expired ones periodically,
// and any access or usage walk finds them gone.
//
// # Usage
//
// Usage is measured by walking the folder (bytes of regular files, hard
// links counted once; every entry), cached per folder and kept exact for
// writes through the port; see usage.go. Quotas are checked for uploads
// through the port only (HostInfo.EnforcesQuota is false): a session
// writing through its mount is not stopped. A backend on XFS project
// quotas (or CephFS quota attributes) would set the quota on the folder's
// directory at creation and read usage from the file system instead of
// walking; the port needs no change for it.
//
// # Cost
//
// Listing a directory reads all its names (getdents), sorts them and stats
// the page's entries only; a page costs O(n log n) in the directory's size
// plus one fstatat per returned entry (about 4 ms per 1,000 entries on the
// reference machine, see bench_test.go).
package localfs
