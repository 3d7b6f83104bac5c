package commandapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

// optionsUploads handles OPTIONS /v1/vfolders/{id}/uploads: 204 with what
// the server's tus offers (version, extensions, checksum algorithms) and
// its size limit (Tus-Max-Size, the same as the PUT upload's; absent when
// only quotas bound an upload).
func (a *api) optionsUploads(c *fiber.Ctx) error {
	const op = "vfolder.uploads.options"
	if _, _, err := a.fileGrant(c, op, fileWrite); err != nil {
		return err
	}
	c.Set(hTusResumable, tusVersion)
	c.Set(hTusVersion, tusVersion)
	c.Set(hTusExtension, tusExtensions)
	c.Set(hTusChecksumAlgos, strings.Join(vfstorage.ChecksumAlgorithms, ","))
	maxSize, err := a.VFolders.maxUploadSize(c.UserContext())
	if err != nil {
		return err
	}
	if maxSize > 0 {
		c.Set(hTusMaxSize, strconv.FormatInt(maxSize, 10))
	}
	return c.SendStatus(http.StatusNoContent)
}
