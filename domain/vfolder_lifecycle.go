package domain

import "time"

// Rename decides a new name (already validated and claimed in the owner's
// index by the caller's same command).
func (f *VFolder) Rename(v VFolderViewer, access VFolderHosts, name string, now time.Time) ([]Event, error) {
	const op = "vfolder.rename"
	if err := f.CheckManage(op, v); err != nil {
		return nil, err
	}
	if err := ValidateVFolderName(op, "name", name); err != nil {
		return nil, err
	}
	if f.status != VFolderReady {
		return nil, Errorf(op, KindConflict, "the folder is %s: only a ready folder can be renamed", f.status)
	}
	if err := access.require(op, f.host, PermModifyVFolder); err != nil {
		return nil, err
	}
	if name == f.name {
		return nil, nil
	}
	return []Event{VFolderRenamed{Name: name, By: v.UserID, At: now}}, nil
}

// FinishClone ends a clone's copy: ready, or error with a message.
func (f *VFolder) FinishClone(ok bool, message string, now time.Time) ([]Event, error) {
	const op = "vfolder.clone"
	if !f.Exists() {
		return nil, Errorf(op, KindNotFound, "no such virtual folder")
	}
	if f.status != VFolderCloning {
		return nil, nil // finished already: a repeated report
	}
	if ok {
		return []Event{VFolderCloneFinished{Status: VFolderReady, At: now}}, nil
	}
	return []Event{VFolderCloneFinished{Status: VFolderError, Message: message, At: now}}, nil
}

// Trash moves a ready folder to the trash (delete-pending), with the
// delete-vfolder host permission. Only ready folders can be deleted.
func (f *VFolder) Trash(v VFolderViewer, access VFolderHosts, now time.Time) ([]Event, error) {
	const op = "vfolder.delete"
	if err := f.CheckManage(op, v); err != nil {
		return nil, err
	}
	if f.status == VFolderDeletePending {
		return nil, nil
	}
	if f.status != VFolderReady {
		return nil, Errorf(op, KindConflict, "the folder is %s: only a ready folder can be deleted", f.status)
	}
	if err := access.require(op, f.host, PermDeleteVFolder); err != nil {
		return nil, err
	}
	return []Event{VFolderTrashed{By: v.UserID, At: now}}, nil
}

// Restore takes a folder out of the trash.
func (f *VFolder) Restore(v VFolderViewer, now time.Time) ([]Event, error) {
	const op = "vfolder.restore"
	if err := f.CheckManage(op, v); err != nil {
		return nil, err
	}
	switch f.status {
	case VFolderReady:
		return nil, nil
	case VFolderDeletePending:
		return []Event{VFolderRestored{By: v.UserID, At: now}}, nil
	}
	return nil, Errorf(op, KindConflict, "the folder is %s: only a folder in the trash can be restored", f.status)
}

// StartDelete starts removing a trashed folder's files (delete-ongoing);
// a failed removal (delete-error) may be started again.
func (f *VFolder) StartDelete(v VFolderViewer, now time.Time) ([]Event, error) {
	const op = "vfolder.delete_forever"
	if err := f.CheckManage(op, v); err != nil {
		return nil, err
	}
	switch f.status {
	case VFolderDeleteOngoing, VFolderDeleteComplete:
		return nil, nil
	case VFolderDeletePending, VFolderDeleteError:
		return []Event{VFolderDeleteStarted{By: v.UserID, At: now}}, nil
	}
	return nil, Errorf(op, KindConflict, "the folder is %s: move it to the trash first", f.status)
}

// FinishDelete records the removal's outcome.
func (f *VFolder) FinishDelete(ok bool, message string, now time.Time) ([]Event, error) {
	const op = "vfolder.delete_forever"
	if !f.Exists() {
		return nil, Errorf(op, KindNotFound, "no such virtual folder")
	}
	if f.status != VFolderDeleteOngoing {
		return nil, nil
	}
	if ok {
		return []Event{VFolderDeleteFinished{Status: VFolderDeleteComplete, At: now}}, nil
	}
	return []Event{VFolderDeleteFinished{Status: VFolderDeleteError, Message: message, At: now}}, nil
}

// Purge removes the record of a folder whose files are deleted; its name
// is then released from the owner's index.
func (f *VFolder) Purge(v VFolderViewer, now time.Time) ([]Event, error) {
	const op = "vfolder.purge"
	if err := f.CheckManage(op, v); err != nil {
		return nil, err
	}
	if f.status != VFolderDeleteComplete {
		return nil, Errorf(op, KindConflict, "the folder is %s: only a folder deleted from the trash can be purged", f.status)
	}
	return []Event{VFolderPurged{By: v.UserID, At: now}}, nil
}
