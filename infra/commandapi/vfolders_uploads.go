package commandapi

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
	"github.com/cairnhq/cairn/readapi"
)

// Resumable uploads: the tus 1.0.0 protocol (core, creation,
// creation-with-upload, termination, checksum, expiration) on
// /v1/vfolders/{id}/uploads, one route per file (vfolders_uploads_*.go),
// over the storage port's resumable uploads (vfstorage.Resumable). It is
// implemented here rather than with tusd's handler: tusd does not offer
// the checksum extension, its stores keep uploads outside our storage
// hosts' folders (no quota reservation, no os.Root path safety), and its
// net/http handler would bypass our problem+json errors and streamed
// bodies. Each request is authorized like the other file writes (write
// permission on the folder, another tenant's folder 404); an upload is
// visible to the user who created it only (anyone else: 404).

// tus protocol constants.
const (
	tusVersion    = "1.0.0"
	tusExtensions = "creation,creation-with-upload,termination,checksum,expiration"
	// tusChunkType is the media type of a chunk's body.
	tusChunkType = "application/offset+octet-stream"
)

// tus request and response headers.
const (
	hTusResumable      = "Tus-Resumable"
	hTusVersion        = "Tus-Version"
	hTusExtension      = "Tus-Extension"
	hTusMaxSize        = "Tus-Max-Size"
	hTusChecksumAlgos  = "Tus-Checksum-Algorithm"
	hUploadOffset      = "Upload-Offset"
	hUploadLength      = "Upload-Length"
	hUploadMetadata    = "Upload-Metadata"
	hUploadExpires     = "Upload-Expires"
	hUploadChecksum    = "Upload-Checksum"
	hUploadDeferLength = "Upload-Defer-Length"
)

// uploadView is the JSON answer of POST /v1/vfolders/{id}/uploads (tus
// clients read the headers; a page may read this).
type uploadView struct {
	ID        string     `json:"id"`
	FolderID  uuid.UUID  `json:"folder_id"`
	Path      string     `json:"path"`
	Length    int64      `json:"length"`
	Offset    int64      `json:"offset"`
	ExpiresAt *time.Time `json:"expires_at"`
	Done      bool       `json:"done"`
	File      *fileView  `json:"file"`
}

func viewUpload(folder uuid.UUID, st vfstorage.UploadState) uploadView {
	v := uploadView{ID: st.ID, FolderID: folder, Path: st.Path, Length: st.Length, Offset: st.Offset, Done: st.Done}
	if st.Done {
		f := viewFile(st.File)
		v.File = &f
	} else {
		exp := st.ExpiresAt.UTC()
		v.ExpiresAt = &exp
	}
	return v
}

// uploadURL is where an upload is continued (its Location).
func uploadURL(folder uuid.UUID, id string) string {
	return "/v1/vfolders/" + folder.String() + "/uploads/" + id
}

// tusResumable checks that the request speaks tus 1.0.0 (412 otherwise,
// with the versions the server speaks) and marks the answer as tus's.
func tusResumable(c *fiber.Ctx, op string) error {
	c.Set(hTusResumable, tusVersion)
	if v := c.Get(hTusResumable); v != tusVersion {
		c.Set(hTusVersion, tusVersion)
		return fiber.NewError(http.StatusPreconditionFailed, fmt.Sprintf("%s: Tus-Resumable %q is not supported; this server speaks %s", op, v, tusVersion))
	}
	return nil
}

// setUploadHeaders puts an upload's offset and expiry in the answer.
func setUploadHeaders(c *fiber.Ctx, st vfstorage.UploadState) {
	c.Set(hUploadOffset, strconv.FormatInt(st.Offset, 10))
	if !st.Done {
		c.Set(hUploadExpires, st.ExpiresAt.UTC().Format(http.TimeFormat))
	}
}

// ownUpload finds the caller's upload {upload} in folder {id}, on which
// the caller must have write permission: an upload of another user is not
// found, like one that does not exist.
func (a *api) ownUpload(c *fiber.Ctx, op string) (string, vfstorage.Ref, vfstorage.UploadState, error) {
	who, err := readapi.CallerOf(c)
	if err != nil {
		return "", vfstorage.Ref{}, vfstorage.UploadState{}, err
	}
	_, ref, err := a.fileGrant(c, op, fileWrite)
	if err != nil {
		return "", vfstorage.Ref{}, vfstorage.UploadState{}, err
	}
	id := strings.Clone(c.Params("upload"))
	st, err := a.VFolders.Storage.UploadState(c.UserContext(), ref, id)
	// One answer for an upload that is not there (any more) and for
	// another user's, so that neither tells anything.
	if errors.Is(err, vfstorage.ErrNotFound) || (err == nil && st.Owner != who.ID.String()) {
		return "", vfstorage.Ref{}, vfstorage.UploadState{}, domain.Errorf(op, domain.KindNotFound, "no upload %q (finished, aborted, expired, or never made)", id)
	}
	if err != nil {
		return "", vfstorage.Ref{}, vfstorage.UploadState{}, err
	}
	return id, ref, st, nil
}

// parseMetadata decodes Upload-Metadata: comma-separated "key
// base64(value)" pairs, the value optional. Keys are unique and
// non-empty, values valid base64.
func parseMetadata(op, header string) (map[string]string, error) {
	meta := map[string]string{}
	if strings.TrimSpace(header) == "" {
		return meta, nil
	}
	for pair := range strings.SplitSeq(header, ",") {
		key, value, _ := strings.Cut(strings.TrimSpace(pair), " ")
		if key == "" || strings.ContainsAny(key, " ") {
			return nil, domain.Invalid(op, hUploadMetadata, "has an empty key")
		}
		if _, dup := meta[key]; dup {
			return nil, domain.Invalid(op, hUploadMetadata, "has the key %q twice", key)
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
		if err != nil {
			return nil, domain.Invalid(op, hUploadMetadata, "the value of %q is not base64", key)
		}
		meta[key] = string(raw)
	}
	return meta, nil
}

// parseChecksum decodes Upload-Checksum ("sha256 base64(digest)"); nil
// when absent.
func parseChecksum(op, header string) (*vfstorage.Checksum, error) {
	if header == "" {
		return nil, nil
	}
	algo, value, ok := strings.Cut(strings.TrimSpace(header), " ")
	h := vfstorage.NewChecksumHash(algo)
	if !ok || h == nil {
		return nil, domain.Invalid(op, hUploadChecksum, "want \"<algorithm> <base64 digest>\" with an algorithm of %s", strings.Join(vfstorage.ChecksumAlgorithms, ", "))
	}
	sum, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
	if err != nil || len(sum) != h.Size() {
		return nil, domain.Invalid(op, hUploadChecksum, "the digest is not a base64 %s digest", algo)
	}
	return &vfstorage.Checksum{Algorithm: algo, Sum: sum}, nil
}

// parseCount reads a non-negative byte count header.
func parseCount(op, name, value string) (int64, error) {
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil || n < 0 {
		return 0, domain.Invalid(op, name, "want a non-negative integer")
	}
	return n, nil
}
