// Package vfolderorphans collects the folder directories that no folder
// owns. CreateVFolder makes a folder's directory before the append that
// creates the folder (so that a ready folder can always be mounted); a
// crash or a failed append in between leaves an empty directory that no
// event mentions, and that no retry may ever come for.
//
// The Collector lists every storage host's folder directories, skips those
// changed within the grace period (a creation in flight makes its
// directory a moment before its append: the grace must exceed that by far),
// and looks each remaining one up in the event log: a directory whose
// folder stream does not exist, holds no folder (creation abandoned) or
// holds a purged one is set aside (vfstorage.Collector.SetAside: moved to
// the host's .cairn-lost+found directory, not deleted, so that a
// misconfiguration such as a server started on an empty event store
// against a storage host full of folders loses nothing). A directory that
// cannot be looked up is left alone.
//
// It sweeps once at start and then every Config.Interval; one collector
// runs per cluster (cairn dev runs it under a lease).
package vfolderorphans
