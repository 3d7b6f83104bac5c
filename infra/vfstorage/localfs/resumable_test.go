package localfs

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

func newTestFolder(t *testing.T, s *Storage) vfstorage.Ref {
	t.Helper()
	ref := vfstorage.Ref{Host: "a", ID: uuid.Must(uuid.NewV7())}
	if err := s.CreateFolder(t.Context(), ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// An upload survives a restart of the process (a new Storage on the same
// host directory): the offset, the reservation in the walked usage, and
// the resumed upload completes.
func TestResumableSurvivesRestart(t *testing.T) {
	t.Parallel()
	cfg := Config{Hosts: Hosts{{"a", t.TempDir()}}}
	s1 := openTest(t, cfg)
	ref := newTestFolder(t, s1)
	data := bytes.Repeat([]byte("0123456789"), 1000)
	st, err := s1.CreateUpload(t.Context(), ref, vfstorage.UploadSpec{Path: "d/f", Length: int64(len(data)), Owner: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.AppendUpload(t.Context(), ref, st.ID, 0, bytes.NewReader(data[:4000]), nil); err != nil {
		t.Fatal(err)
	}
	s1.Close()

	s2 := openTest(t, cfg)
	got, err := s2.UploadState(t.Context(), ref, st.ID)
	if err != nil || got.Offset != 4000 || got.Length != int64(len(data)) || got.Owner != "u" || got.Path != "d/f" {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
	if u, err := s2.Usage(t.Context(), ref); err != nil || u.Bytes != int64(len(data)) {
		t.Fatalf("usage after a restart: %+v, %v; want the upload's length reserved", u, err)
	}
	if _, err := s2.AppendUpload(t.Context(), ref, st.ID, 4000, bytes.NewReader(data[4000:]), nil); err != nil {
		t.Fatal(err)
	}
	r, _, err := s2.Download(t.Context(), ref, "d/f")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, _ := io.ReadAll(r); !bytes.Equal(b, data) {
		t.Fatal("the resumed file differs")
	}
}

// An upload with no byte for UploadTTL expires: ExpireUploads removes it
// and releases its reservation; one written to recently stays.
func TestResumableExpiry(t *testing.T) {
	t.Parallel()
	s := openTest(t, Config{Hosts: Hosts{{"a", t.TempDir()}}, UploadTTL: time.Hour})
	now := time.Now()
	s.now = func() time.Time { return now }
	ref := newTestFolder(t, s)
	old, err := s.CreateUpload(t.Context(), ref, vfstorage.UploadSpec{Path: "old", Length: 100})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := s.CreateUpload(t.Context(), ref, vfstorage.UploadSpec{Path: "fresh", Length: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(time.Hour); !old.ExpiresAt.Equal(want) {
		t.Fatalf("expires at %v, want %v", old.ExpiresAt, want)
	}
	// 59 minutes on, the fresh one gets a byte: its lifetime starts again.
	now = now.Add(59 * time.Minute)
	if _, err := s.AppendUpload(t.Context(), ref, fresh.ID, 0, bytes.NewReader([]byte("x")), nil); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ExpireUploads(t.Context()); err != nil || n != 0 {
		t.Fatalf("ExpireUploads before the lifetime: %d, %v", n, err)
	}
	now = now.Add(2 * time.Minute)
	if n, err := s.ExpireUploads(t.Context()); err != nil || n != 1 {
		t.Fatalf("ExpireUploads: %d, %v; want 1", n, err)
	}
	if _, err := s.UploadState(t.Context(), ref, old.ID); !errors.Is(err, vfstorage.ErrNotFound) {
		t.Fatalf("the expired upload: %v", err)
	}
	if u, err := s.Usage(t.Context(), ref); err != nil || u.Bytes != 10 {
		t.Fatalf("usage %+v, %v; want only the live upload's 10 bytes", u, err)
	}
	if u, err := s.RefreshUsage(t.Context(), ref); err != nil || u.Bytes != 10 {
		t.Fatalf("walked usage %+v, %v; want 10", u, err)
	}
}
