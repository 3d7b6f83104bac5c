package signing

import (
	"crypto/sha256"
	"hash"
	"io"
)

func errBodyMismatch() *Error {
	return refuse(ReasonBodyMismatch, "the body's SHA-256 is not the signed "+HeaderContentSHA256)
}

// BodyReader reads a streamed body of a strict-mode request and checks it
// against the signed hash: where the body ends, a mismatch is reported
// instead of io.EOF (a body-mismatch refusal), so a reader that commits
// only after a clean io.EOF (vfstorage's Upload) commits nothing.
type BodyReader struct {
	r    io.Reader
	h    hash.Hash
	want [sha256.Size]byte
	err  error // the mismatch, once seen
}

// VerifyBody wraps a streamed body whose SHA-256 must be want
// (Result.ContentSHA256).
func VerifyBody(r io.Reader, want [sha256.Size]byte) *BodyReader {
	return &BodyReader{r: r, h: sha256.New(), want: want}
}

func (b *BodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	b.h.Write(p[:n])
	if err == io.EOF && [sha256.Size]byte(b.h.Sum(nil)) != b.want {
		b.err = errBodyMismatch()
		return n, b.err
	}
	return n, err
}

// Err is the body-mismatch refusal once the end of a body that does not
// match was read, nil before and for a matching body.
func (b *BodyReader) Err() error {
	if b.err == nil {
		return nil
	}
	return b.err
}
