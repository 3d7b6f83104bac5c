package vfstorage

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"hash"
	"io"
	"regexp"
	"time"
)

// Resumable is the part of the port that keeps uploads arriving in
// several requests (the tus protocol's uploads): an upload is created with
// its final length, which counts against the folder's quota at once
// (Usage includes it), receives its bytes in order in chunks that each
// append at the stored offset, and is put at its path atomically once the
// last byte came. Its bytes are staged on the folder's own storage host
// and survive a restart of the server; an upload that receives no byte for
// the backend's upload lifetime expires and is removed, its reservation
// released.
type Resumable interface {
	// CreateUpload starts an upload; a zero-length one is complete at once.
	// The target path, its parents and an existing file there are checked
	// now (ErrExists under NoReplace, ErrIsDir, ErrNotDir), and the length
	// against opts' limits (ErrTooLarge, ErrQuotaExceeded): nothing is
	// written when they refuse.
	CreateUpload(ctx context.Context, ref Ref, spec UploadSpec) (UploadState, error)
	// UploadState reports an upload: how many bytes are stored (the
	// offset a client resumes from). It waits for a chunk being written to
	// the upload to end, so the offset is what is durably stored. An
	// unknown, finished, aborted or expired upload is ErrNotFound.
	UploadState(ctx context.Context, ref Ref, id string) (UploadState, error)
	// AppendUpload appends r's bytes at offset, which must be the upload's
	// offset (else ErrOffset, nothing read). Without a checksum the bytes
	// that came are kept, even when r fails midway (a cut connection); with
	// one, the chunk is kept only whole and matching (else ErrChecksum, and
	// the offset stays where it was). More bytes than the upload's length
	// are refused (ErrTooLarge), the chunk discarded. The chunk that
	// completes the upload puts the file at its path (creating missing
	// parent directories) and the upload is gone; if that fails (the path
	// was taken meanwhile under NoReplace: ErrExists), the upload is
	// removed and its reservation released.
	AppendUpload(ctx context.Context, ref Ref, id string, offset int64, r io.Reader, sum *Checksum) (UploadState, error)
	// AbortUpload removes an upload and releases its reservation.
	AbortUpload(ctx context.Context, ref Ref, id string) error
	// ExpireUploads removes the uploads of every host that expired, and
	// returns how many.
	ExpireUploads(ctx context.Context) (int, error)
}

// UploadSpec describes a resumable upload.
type UploadSpec struct {
	// Path is the file's path in the folder once complete.
	Path string
	// Length is the file's size in bytes.
	Length int64
	// Owner is who created the upload (a user id), kept for the caller to
	// check who may continue it.
	Owner string
	// Metadata is kept as given and reported back (the client's own
	// description of the upload).
	Metadata string
	// Options bound the upload (MaxSize and Quota against Length at
	// creation; NoReplace at creation and at completion).
	Options UploadOptions
}

// UploadState is where a resumable upload stands.
type UploadState struct {
	ID       string
	Path     string
	Length   int64
	Offset   int64
	Owner    string
	Metadata string
	// ExpiresAt is when the upload expires unless more bytes come.
	ExpiresAt time.Time
	// Done is set once the file is in place; File describes it.
	Done bool
	File FileInfo
}

// Checksum is the expected digest of one chunk.
type Checksum struct {
	// Algorithm is one of ChecksumAlgorithms.
	Algorithm string
	Sum       []byte
}

// ChecksumAlgorithms are the digests a chunk may be checked with, in the
// order servers advertise them.
var ChecksumAlgorithms = []string{"sha1", "sha256"}

// NewChecksumHash returns the hash of a supported algorithm, or nil.
func NewChecksumHash(algorithm string) hash.Hash {
	switch algorithm {
	case "sha1":
		return sha1.New()
	case "sha256":
		return sha256.New()
	}
	return nil
}

var uploadIDPattern = regexp.MustCompile(`^[A-Z2-7]{26}$`)

// ValidUploadID tells whether id has the form of the upload ids backends
// make (26 characters of base32, crypto/rand.Text), so that an id from a
// URL can be used as a file name.
func ValidUploadID(id string) bool { return uploadIDPattern.MatchString(id) }
