// Package vfolderjobs is the process manager of the virtual folders' long
// storage operations: the copy of a clone (a folder created in status
// cloning: vfstorage CloneFolder, then commands.FinishVFolderClone) and
// the removal of a folder's data (a folder that went delete-ongoing:
// DeleteFolder, then commands.FinishVFolderDelete).
//
// It follows the event log for vfolder.created (of a clone) and
// vfolder.delete_started. At start it resumes what a crash or a stop
// interrupted: the folders still cloning or delete-ongoing (the Pending
// port, the vfolders read model), as of a log position from which it then
// follows the log, so that no job is missed between the two.
//
// Every job first folds the folder from its stream and does nothing if it
// has moved on (a job seen twice, or finished by another runner). The
// storage operations are idempotent (a clone whose copy is complete
// reports that its target exists, which counts as done), so running a job
// again after a crash is safe. A storage failure is the job's outcome
// (the clone ends in error, the deletion in delete-error, which the user
// may retry); only a stop leaves a job for the next start. One manager
// runs per cluster (cairn dev runs it under a lease).
package vfolderjobs
