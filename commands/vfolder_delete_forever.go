package commands

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// DeleteVFolderForever starts removing the files of a folder in the trash
// (or one whose removal failed): the folder goes delete-ongoing, and the
// vfolder jobs process manager (commands/vfolderjobs) removes the data and
// sends FinishVFolderDelete. The command itself does no I/O on storage, so
// it answers at once however large the folder is.
type DeleteVFolderForever struct {
	Actor    Principal
	FolderID uuid.UUID
}

func (DeleteVFolderForever) CommandName() string { return "vfolder.delete-forever" }

type deleteVFolderForeverHandler struct{ vfolderParts }

// newDeleteVFolderForeverHandler builds the handler over the vfolder parts.
func newDeleteVFolderForeverHandler(parts vfolderParts) deleteVFolderForeverHandler {
	return deleteVFolderForeverHandler{parts}
}

func (h deleteVFolderForeverHandler) Handle(ctx context.Context, md Metadata, cmd DeleteVFolderForever) (VFolderResult, error) {
	return h.updateFolder(ctx, "vfolder.delete_forever", md, cmd.Actor, cmd.FolderID, func(f *domain.VFolder, acc VFolderAccess, at time.Time) ([]domain.Event, error) {
		return f.StartDelete(acc.Viewer, at)
	})
}
