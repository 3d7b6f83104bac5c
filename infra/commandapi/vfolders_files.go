package commandapi

import (
	"errors"
	"strconv"
	"time"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

// Access levels of the file routes (commands.AuthorizeVFolderFiles).
type fileAccess int

const (
	fileRead   fileAccess = iota // ro and download-file
	fileWrite                    // rw and upload-file
	fileRemove                   // wd and upload-file
)

// fileGrant authorizes a file route on the {id} folder and returns where
// its files are.
func (a *api) fileGrant(c *fiber.Ctx, op string, access fileAccess) (commands.VFolderFilesGrant, vfstorage.Ref, error) {
	who, err := readapi.CallerOf(c)
	if err != nil {
		return commands.VFolderFilesGrant{}, vfstorage.Ref{}, err
	}
	id, err := readapi.FolderID(c, op)
	if err != nil {
		return commands.VFolderFilesGrant{}, vfstorage.Ref{}, err
	}
	g, err := a.Commands.AuthorizeVFolderFiles.Handle(c.UserContext(), metadata(c, who), commands.AuthorizeVFolderFiles{
		Actor: actor(who), FolderID: id, Write: access >= fileWrite, Remove: access == fileRemove})
	if err != nil {
		return commands.VFolderFilesGrant{}, vfstorage.Ref{}, err
	}
	return g, vfstorage.Ref{Host: g.Host, ID: g.FolderID}, nil
}

// fileView is one directory entry on the wire.
type fileView struct {
	Name       string             `json:"name"`
	Type       vfstorage.FileType `json:"type"`
	Size       int64              `json:"size"`
	Mode       string             `json:"mode"`
	ModifiedAt time.Time          `json:"modified_at"`
}

func viewFile(fi vfstorage.FileInfo) fileView {
	return fileView{Name: fi.Name, Type: fi.Type, Size: fi.Size, Mode: "0" + strconv.FormatUint(uint64(fi.Mode.Perm()), 8), ModifiedAt: fi.ModTime.UTC()}
}

// fileChanged is the answer of the file routes that change a folder.
type fileChanged struct {
	FolderID uuid.UUID `json:"folder_id"`
	Path     string    `json:"path"`
}

// pathError names the request's field in the storage port's invalid-path
// errors (the port names its own argument, e.g. dir). A failure to read
// the request's body stays an error of the body.
func pathError(err error, field string) error {
	var de *domain.Error
	if errors.As(err, &de) && de.Kind == domain.KindInvalid && de.Field != "" && de.Field != field && de.Field != "body" {
		e := *de
		e.Field = field
		return &e
	}
	return err
}
