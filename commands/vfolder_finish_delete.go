package commands

import (
	"context"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// FinishVFolderDelete records the outcome of removing a folder's data
// (delete-complete, or delete-error with the message). The vfolder jobs
// process manager sends it; it has no actor. Repeating it appends nothing.
type FinishVFolderDelete struct {
	FolderID uuid.UUID
	OK       bool
	Message  string
}

func (FinishVFolderDelete) CommandName() string { return "vfolder.finish-delete" }

type finishVFolderDeleteHandler struct {
	vfolders vfolderRepos
	clock
}

// newFinishVFolderDeleteHandler builds the handler over what it uses.
func newFinishVFolderDeleteHandler(vfolders vfolderRepos, now clock) finishVFolderDeleteHandler {
	return finishVFolderDeleteHandler{vfolders: vfolders, clock: now}
}

func (h finishVFolderDeleteHandler) Handle(ctx context.Context, md Metadata, cmd FinishVFolderDelete) (VFolderResult, error) {
	at := h.now()
	_, pos, err := h.vfolders.folders.update(ctx, domain.VFolderStream(cmd.FolderID), md, func(f *domain.VFolder) ([]domain.Event, error) {
		return f.FinishDelete(cmd.OK, cmd.Message, at)
	})
	return folderResult(cmd.FolderID, pos, err)
}
