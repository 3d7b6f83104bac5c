package localfs

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"strconv"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

// Resumable uploads. An upload is two files in the folder's
// <ReservedName>/resumable directory, on the folder's own file system: <id>.json, what
// the upload is (written once, atomically, before anything else), and
// <id>, the bytes stored so far, whose size is the upload's offset. Every
// chunk is fsynced before it is acknowledged, so the offset read after a
// crash or a restart is what was acknowledged (or more). The upload's full
// length counts in the folder's usage from its creation: the walk adds the
// lengths of the live uploads it finds, and every change keeps the cached
// usage exact under the folder's lock. The last chunk renames (or, under
// NoReplace, hard-links) the bytes to the target path, then removes the
// description: a crash in between leaves a description without bytes,
// which every reader treats as gone and removes.

// resumableName is the directory of the resumable uploads in the folder's
// ReservedName directory.
const resumableName = "resumable"

const resumableDir = vfstorage.ReservedName + "/" + resumableName

func dataName(id string) string { return resumableDir + "/" + id }
func infoName(id string) string { return resumableDir + "/" + id + ".json" }

// uploadInfo is the description of an upload, its <id>.json.
type uploadInfo struct {
	Path      string    `json:"path"`
	Length    int64     `json:"length"`
	Owner     string    `json:"owner"`
	Metadata  string    `json:"metadata,omitempty"`
	NoReplace bool      `json:"no_replace"`
	CreatedAt time.Time `json:"created_at"`
}

// expiresAt is when an upload last written at modTime expires.
func (s *Storage) expiresAt(info uploadInfo, modTime time.Time) time.Time {
	if modTime.Before(info.CreatedAt) {
		modTime = info.CreatedAt
	}
	return modTime.Add(s.cfg.UploadTTL)
}

func (s *Storage) stateOf(id string, info uploadInfo, data fs.FileInfo) vfstorage.UploadState {
	return vfstorage.UploadState{ID: id, Path: info.Path, Length: info.Length, Offset: data.Size(), Owner: info.Owner,
		Metadata: info.Metadata, ExpiresAt: s.expiresAt(info, data.ModTime())}
}

// CreateUpload checks the target and the limits, reserves the length in
// the folder's usage under the folder's lock, and writes the upload's
// description and its empty bytes file.
func (s *Storage) CreateUpload(ctx context.Context, ref vfstorage.Ref, spec vfstorage.UploadSpec) (vfstorage.UploadState, error) {
	const op = "vfstorage.create-upload"
	clean, err := vfstorage.CleanPath(op, "path", spec.Path)
	if err != nil {
		return vfstorage.UploadState{}, err
	}
	opts := spec.Options
	switch {
	case clean == ".":
		return vfstorage.UploadState{}, vfstorage.Failf(op, "path", spec.Path, vfstorage.ErrIsDir, "(the folder's root)")
	case spec.Length < 0:
		return vfstorage.UploadState{}, vfstorage.Failf(op, "length", "", vfstorage.ErrInvalid, "must not be negative")
	case opts.MaxSize < 0 || opts.Quota < 0:
		return vfstorage.UploadState{}, vfstorage.Failf(op, "options", "", vfstorage.ErrInvalid, "limits must not be negative")
	case opts.MaxSize > 0 && spec.Length > opts.MaxSize:
		return vfstorage.UploadState{}, vfstorage.Failf(op, "path", clean, vfstorage.ErrTooLarge,
			"would be "+strconv.FormatInt(spec.Length, 10)+" bytes, over "+strconv.FormatInt(opts.MaxSize, 10))
	}
	if err := ctx.Err(); err != nil {
		return vfstorage.UploadState{}, canceled(op, err)
	}
	root, err := s.openFolder(op, ref)
	if err != nil {
		return vfstorage.UploadState{}, err
	}
	defer root.Close()
	st := s.state(ref)
	st.mu.Lock()
	defer st.mu.Unlock()
	old, err := checkTarget(op, root, clean, opts.NoReplace)
	if err != nil {
		return vfstorage.UploadState{}, err
	}
	if opts.Quota > 0 {
		u, err := s.measure(ctx, op, root, st, s.cfg.UsageTTL)
		if err != nil {
			return vfstorage.UploadState{}, err
		}
		if u.Bytes-old.bytes+spec.Length > opts.Quota {
			return vfstorage.UploadState{}, vfstorage.Failf(op, "path", clean, vfstorage.ErrQuotaExceeded,
				"would take the folder over its quota of "+strconv.FormatInt(opts.Quota, 10)+" bytes")
		}
	}
	if err := ensureResumable(root); err != nil {
		return vfstorage.UploadState{}, classify(op, "path", clean, err)
	}
	id := rand.Text()
	info := uploadInfo{Path: clean, Length: spec.Length, Owner: spec.Owner, Metadata: spec.Metadata,
		NoReplace: opts.NoReplace, CreatedAt: s.now().UTC()}
	data, err := writeUpload(root, id, info)
	if err != nil {
		removeUpload(root, id)
		return vfstorage.UploadState{}, classify(op, "path", clean, err)
	}
	st.add(spec.Length, 0)
	state := s.stateOf(id, info, data)
	if spec.Length == 0 {
		return s.complete(op, root, st, id, info)
	}
	return state, nil
}

// writeUpload writes an upload's description (through a temporary name,
// so that it is whole or absent) and then its empty bytes file, both
// synced.
func writeUpload(root *os.Root, id string, info uploadInfo) (fs.FileInfo, error) {
	raw, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	tmp := infoName(id) + ".tmp"
	if err := writeSynced(root, tmp, raw); err != nil {
		root.Remove(tmp)
		return nil, err
	}
	if err := root.Rename(tmp, infoName(id)); err != nil {
		root.Remove(tmp)
		return nil, err
	}
	f, err := root.OpenFile(dataName(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := root.Chtimes(dataName(id), info.CreatedAt, info.CreatedAt); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return fi, syncDir(root, resumableDir)
}

func writeSynced(root *os.Root, name string, data []byte) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ensureResumable makes the folder's resumable uploads directory.
func ensureResumable(root *os.Root) error {
	if err := ensureStaging(root); err != nil {
		return err
	}
	err := root.Mkdir(resumableDir, 0o700)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := root.Lstat(resumableDir)
	if err != nil || fi.IsDir() {
		return err
	}
	if err := root.Remove(resumableDir); err != nil {
		return err
	}
	return root.Mkdir(resumableDir, 0o700)
}

// checkTarget refuses, before any byte, a target that cannot be put in
// place: a directory, an existing file under noReplace, a parent that is
// not a directory. Missing parents are made at completion.
func checkTarget(op string, root *os.Root, clean string, noReplace bool) (replaced, error) {
	for i := range len(clean) {
		if clean[i] != '/' {
			continue
		}
		fi, err := root.Stat(clean[:i])
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return replaced{}, nil
		case err != nil:
			return replaced{}, classify(op, "path", clean[:i], err)
		case !fi.IsDir():
			return replaced{}, vfstorage.Fail(op, "path", clean[:i], vfstorage.ErrNotDir)
		}
	}
	return existing(op, root, clean, noReplace)
}

// UploadState reports an upload once no chunk is being written to it.
func (s *Storage) UploadState(ctx context.Context, ref vfstorage.Ref, id string) (vfstorage.UploadState, error) {
	const op = "vfstorage.upload-state"
	root, release, err := s.openUpload(ctx, op, ref, id)
	if err != nil {
		return vfstorage.UploadState{}, err
	}
	defer release()
	defer root.Close()
	info, data, err := s.loadUpload(op, root, ref, id)
	if err != nil {
		return vfstorage.UploadState{}, err
	}
	return s.stateOf(id, info, data), nil
}

// AbortUpload removes an upload once no chunk is being written to it.
func (s *Storage) AbortUpload(ctx context.Context, ref vfstorage.Ref, id string) error {
	const op = "vfstorage.abort-upload"
	root, release, err := s.openUpload(ctx, op, ref, id)
	if err != nil {
		return err
	}
	defer release()
	defer root.Close()
	info, _, err := s.loadUpload(op, root, ref, id)
	if err != nil {
		return err
	}
	st := s.state(ref)
	st.mu.Lock()
	defer st.mu.Unlock()
	s.dropUpload(root, st, id, info)
	return nil
}

// AppendUpload writes one chunk at the upload's offset, holding the
// upload's lock (one chunk at a time per upload).
func (s *Storage) AppendUpload(ctx context.Context, ref vfstorage.Ref, id string, offset int64, r io.Reader, sum *vfstorage.Checksum) (vfstorage.UploadState, error) {
	const op = "vfstorage.append-upload"
	if sum != nil && vfstorage.NewChecksumHash(sum.Algorithm) == nil {
		return vfstorage.UploadState{}, vfstorage.Failf(op, "checksum", sum.Algorithm, vfstorage.ErrInvalid, "is not a supported algorithm")
	}
	root, release, err := s.openUpload(ctx, op, ref, id)
	if err != nil {
		return vfstorage.UploadState{}, err
	}
	defer release()
	defer root.Close()
	info, data, err := s.loadUpload(op, root, ref, id)
	if err != nil {
		return vfstorage.UploadState{}, err
	}
	at := data.Size()
	if offset != at {
		return vfstorage.UploadState{}, vfstorage.Failf(op, "offset", "", vfstorage.ErrOffset,
			fmt.Sprintf("the upload holds %d bytes; the chunk was sent for offset %d", at, offset))
	}
	f, err := root.OpenFile(dataName(id), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return vfstorage.UploadState{}, classify(op, "path", info.Path, err)
	}
	defer f.Close()
	n, err := appendChunk(f, r, info.Length-at, sum)
	if err != nil {
		// What a failed chunk keeps: nothing if it was checked, or over
		// the length, or if the disk failed; else what came (a cut
		// connection), so that the client resumes after it.
		keep := sum == nil && !errors.Is(err, vfstorage.ErrTooLarge) && !isWriteErr(err, f)
		if !keep {
			n = 0
			if terr := f.Truncate(at); terr != nil {
				return vfstorage.UploadState{}, vfstorage.Internal(op, fmt.Errorf("discarding a refused chunk: %w", terr))
			}
		}
		if serr := f.Sync(); serr != nil {
			return vfstorage.UploadState{}, classify(op, "path", info.Path, serr)
		}
		return vfstorage.UploadState{}, s.chunkError(op, info, f, err)
	}
	if err := f.Sync(); err != nil {
		return vfstorage.UploadState{}, classify(op, "path", info.Path, err)
	}
	if err := f.Close(); err != nil {
		return vfstorage.UploadState{}, classify(op, "path", info.Path, err)
	}
	// The last write, on the backend's clock, is what the lifetime counts from.
	if now := s.now(); root.Chtimes(dataName(id), now, now) != nil {
		s.log.Warn("setting an upload's last write time", slog.String("upload", id))
	}
	if at+n < info.Length {
		fi, err := root.Lstat(dataName(id))
		if err != nil {
			return vfstorage.UploadState{}, classify(op, "path", info.Path, err)
		}
		return s.stateOf(id, info, fi), nil
	}
	st := s.state(ref)
	st.mu.Lock()
	defer st.mu.Unlock()
	return s.complete(op, root, st, id, info)
}

// appendChunk copies r to f, at most left bytes (one more is
// ErrTooLarge), checking sum if given.
func appendChunk(f *os.File, r io.Reader, left int64, sum *vfstorage.Checksum) (int64, error) {
	var (
		w io.Writer = writerOnly{f}
		h hash.Hash
	)
	if sum != nil {
		h = vfstorage.NewChecksumHash(sum.Algorithm)
		w = io.MultiWriter(f, h)
	}
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	n, err := io.CopyBuffer(w, io.LimitReader(r, left+1), *bp)
	switch {
	case err != nil:
		return n, err
	case n > left:
		return n, vfstorage.ErrTooLarge
	case h != nil && subtle.ConstantTimeCompare(h.Sum(nil), sum.Sum) != 1:
		return n, vfstorage.ErrChecksum
	}
	return n, nil
}

// chunkError is the port's error for a chunk that failed with err.
func (s *Storage) chunkError(op string, info uploadInfo, f *os.File, err error) error {
	switch {
	case errors.Is(err, vfstorage.ErrTooLarge):
		return vfstorage.Failf(op, "body", info.Path, vfstorage.ErrTooLarge,
			"gets more bytes than the upload's length of "+strconv.FormatInt(info.Length, 10))
	case errors.Is(err, vfstorage.ErrChecksum):
		return vfstorage.Failf(op, "checksum", info.Path, vfstorage.ErrChecksum, "(the chunk was discarded)")
	case isWriteErr(err, f):
		return classify(op, "path", info.Path, err)
	case isContextErr(err):
		return canceled(op, err)
	}
	return &domain.Error{Op: op, Kind: domain.KindInvalid, Field: "body", Message: "reading the chunk", Err: err}
}

// complete puts a whole upload at its path; st.mu must be held. Whatever
// refuses it (the path taken meanwhile under NoReplace, a parent turned
// into a file) removes the upload.
func (s *Storage) complete(op string, root *os.Root, st *folderState, id string, info uploadInfo) (vfstorage.UploadState, error) {
	fail := func(err error) (vfstorage.UploadState, error) {
		s.dropUpload(root, st, id, info)
		return vfstorage.UploadState{}, err
	}
	old, err := checkTarget(op, root, info.Path, info.NoReplace)
	if err != nil {
		return fail(err)
	}
	parent := path.Dir(info.Path)
	if parent != "." {
		if err := makeDirs(op, root, st, parent); err != nil {
			return fail(err)
		}
	}
	if info.NoReplace {
		err = root.Link(dataName(id), info.Path)
	} else {
		err = root.Rename(dataName(id), info.Path)
	}
	if err != nil {
		return fail(classify(op, "path", info.Path, err))
	}
	// The bytes are the file now: the reservation becomes its size.
	if old.shared {
		st.forget()
	}
	st.add(-old.bytes, 1-old.files)
	if info.NoReplace {
		root.Remove(dataName(id))
	}
	if err := root.Remove(infoName(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("removing a finished upload's description", slog.String("upload", id), slog.Any("err", err))
	}
	if err := syncDir(root, parent); err != nil {
		return vfstorage.UploadState{}, vfstorage.Internal(op, fmt.Errorf("the file is in place but may not be durable: %w", err))
	}
	fi, err := root.Lstat(info.Path)
	if err != nil {
		return vfstorage.UploadState{}, classify(op, "path", info.Path, err)
	}
	file := vfstorage.InfoOf(fi)
	return vfstorage.UploadState{ID: id, Path: info.Path, Length: info.Length, Offset: info.Length, Owner: info.Owner,
		Metadata: info.Metadata, ExpiresAt: s.expiresAt(info, fi.ModTime()), Done: true, File: file}, nil
}

// openUpload opens the folder and takes the upload's lock (waiting for a
// chunk being written, at most until ctx ends).
func (s *Storage) openUpload(ctx context.Context, op string, ref vfstorage.Ref, id string) (*os.Root, func(), error) {
	if !vfstorage.ValidUploadID(id) {
		return nil, nil, vfstorage.Failf(op, "", "", vfstorage.ErrNotFound, "no upload "+strconv.Quote(id))
	}
	root, err := s.openFolder(op, ref)
	if err != nil {
		return nil, nil, err
	}
	release, err := s.uploadLocks.acquire(ctx, ref.String()+"/"+id)
	if err != nil {
		root.Close()
		return nil, nil, canceled(op, err)
	}
	return root, release, nil
}

// loadUpload reads an upload's description and stats its bytes. One
// without bytes (finished by a process that died before removing it) or
// expired is removed and not found.
func (s *Storage) loadUpload(op string, root *os.Root, ref vfstorage.Ref, id string) (uploadInfo, fs.FileInfo, error) {
	notFound := vfstorage.Failf(op, "", "", vfstorage.ErrNotFound, "no upload "+strconv.Quote(id))
	raw, err := root.ReadFile(infoName(id))
	if errors.Is(err, fs.ErrNotExist) {
		return uploadInfo{}, nil, notFound
	} else if err != nil {
		return uploadInfo{}, nil, classify(op, "", "", err)
	}
	var info uploadInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return uploadInfo{}, nil, vfstorage.Internal(op, fmt.Errorf("upload %s: %w", id, err))
	}
	// The description is in the folder, where a session that mounts it
	// can write: its path passes the same gate as a client's.
	if clean, err := vfstorage.CleanPath(op, "path", info.Path); err != nil || clean != info.Path || clean == "." {
		return uploadInfo{}, nil, vfstorage.Internal(op, fmt.Errorf("upload %s: its description names the path %q", id, info.Path))
	}
	data, err := root.Lstat(dataName(id))
	if errors.Is(err, fs.ErrNotExist) {
		root.Remove(infoName(id))
		return uploadInfo{}, nil, notFound
	} else if err != nil {
		return uploadInfo{}, nil, classify(op, "", "", err)
	}
	if !s.now().Before(s.expiresAt(info, data.ModTime())) {
		st := s.state(ref)
		st.mu.Lock()
		s.dropUpload(root, st, id, info)
		st.mu.Unlock()
		return uploadInfo{}, nil, vfstorage.Failf(op, "", "", vfstorage.ErrNotFound, "upload "+strconv.Quote(id)+" expired")
	}
	return info, data, nil
}

// dropUpload removes an upload's files and releases its reservation;
// st.mu must be held.
func (s *Storage) dropUpload(root *os.Root, st *folderState, id string, info uploadInfo) {
	if err := root.Remove(dataName(id)); err == nil {
		st.add(-info.Length, 0)
	} else if !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("removing an upload", slog.String("upload", id), slog.Any("err", err))
		st.forget()
	}
	removeUpload(root, id)
}

// removeUpload removes whatever is left of an upload's files.
func removeUpload(root *os.Root, id string) {
	for _, name := range []string{dataName(id), infoName(id), infoName(id) + ".tmp"} {
		root.Remove(name)
	}
}
