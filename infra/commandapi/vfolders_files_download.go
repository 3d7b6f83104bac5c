package commandapi

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
)

// downloadVFolderFile handles GET /v1/vfolders/{id}/files/content?path=:
// the file's bytes, streamed from the storage host (sendfile where the
// host is a local file system). A single byte range (Range: bytes=a-b,
// a-, -n) answers 206 with Content-Range; a range past the end answers
// 416; several ranges, or a malformed Range, get the whole file (200), as
// RFC 9110 allows.
func (a *api) downloadVFolderFile(c *fiber.Ctx) error {
	const op = "vfolder.files.download"
	path := strings.Clone(c.Query("path"))
	if path == "" {
		return domain.Invalid(op, "path", "required")
	}
	_, ref, err := a.fileGrant(c, op, fileRead)
	if err != nil {
		return err
	}
	f, fi, err := a.VFolders.Storage.Download(c.UserContext(), ref, path)
	if err != nil {
		return pathError(err, "path")
	}
	start, length, partial, ok := parseRange(c.Get(fiber.HeaderRange), fi.Size)
	if !ok {
		f.Close()
		c.Set(fiber.HeaderContentRange, "bytes */"+strconv.FormatInt(fi.Size, 10))
		return fiber.NewError(http.StatusRequestedRangeNotSatisfiable,
			fmt.Sprintf("range %q is not satisfiable: the file is %d bytes", c.Get(fiber.HeaderRange), fi.Size))
	}
	c.Set(fiber.HeaderAcceptRanges, "bytes")
	c.Set(fiber.HeaderContentType, "application/octet-stream")
	c.Set(fiber.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": fi.Name}))
	c.Set(fiber.HeaderLastModified, fi.ModTime.UTC().Format(http.TimeFormat))
	if !partial {
		c.Status(http.StatusOK).Context().SetBodyStream(f, int(fi.Size))
		return nil
	}
	c.Set(fiber.HeaderContentRange, fmt.Sprintf("bytes %d-%d/%d", start, start+length-1, fi.Size))
	c.Status(http.StatusPartialContent).Context().SetBodyStream(
		struct {
			io.Reader
			io.Closer
		}{io.NewSectionReader(f, start, length), f}, int(length))
	return nil
}

// parseRange reads a Range header against a file of size bytes: the
// range to send (partial), or the whole file (not partial: no header,
// several ranges, or a malformed one), or ok false for a single range
// that lies past the end (416).
func parseRange(header string, size int64) (start, length int64, partial, ok bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(header), "bytes=")
	if header == "" || !found || strings.Contains(spec, ",") {
		return 0, size, false, true
	}
	first, last, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, size, false, true
	}
	if first == "" { // the last n bytes
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return 0, size, false, true
		}
		if n == 0 || size == 0 {
			return 0, 0, false, false
		}
		n = min(n, size)
		return size - n, n, true, true
	}
	a, err := strconv.ParseInt(first, 10, 64)
	if err != nil || a < 0 {
		return 0, size, false, true
	}
	if a >= size {
		return 0, 0, false, false
	}
	b := size - 1
	if last != "" {
		if b, err = strconv.ParseInt(last, 10, 64); err != nil || b < a {
			return 0, size, false, true
		}
		b = min(b, size-1)
	}
	return a, b - a + 1, true, true
}
