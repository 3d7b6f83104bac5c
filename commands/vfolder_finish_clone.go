package commands

import (
	"context"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// FinishVFolderClone records the outcome of a clone's copy (ready, or
// error with the message). The vfolder jobs process manager sends it; it
// has no actor. Repeating it appends nothing.
type FinishVFolderClone struct {
	FolderID uuid.UUID
	OK       bool
	Message  string
}

func (FinishVFolderClone) CommandName() string { return "vfolder.finish-clone" }

type finishVFolderCloneHandler struct {
	vfolders vfolderRepos
	clock
}

// newFinishVFolderCloneHandler builds the handler over what it uses.
func newFinishVFolderCloneHandler(vfolders vfolderRepos, now clock) finishVFolderCloneHandler {
	return finishVFolderCloneHandler{vfolders: vfolders, clock: now}
}

func (h finishVFolderCloneHandler) Handle(ctx context.Context, md Metadata, cmd FinishVFolderClone) (VFolderResult, error) {
	at := h.now()
	_, pos, err := h.vfolders.folders.update(ctx, domain.VFolderStream(cmd.FolderID), md, func(f *domain.VFolder) ([]domain.Event, error) {
		return f.FinishClone(cmd.OK, cmd.Message, at)
	})
	return folderResult(cmd.FolderID, pos, err)
}
