package localfs

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/cairnhq/cairn/infra/vfstorage"
)

// scanUploads goes through a folder's resumable uploads; st.mu must be
// held. It removes the expired ones, and the leftovers of creations and
// completions that a dying process did not finish, and returns the
// length of the live ones (their reservation) and of the removed ones
// (which the caller releases from a cached usage, unless it just walked).
func (s *Storage) scanUploads(root *os.Root, now time.Time) (live, removed int64, expired int) {
	entries, err := fs.ReadDir(root.FS(), resumableDir)
	if err != nil {
		return 0, 0, 0 // none yet
	}
	names := make(map[string]bool, len(entries))
	for _, e := range entries {
		names[e.Name()] = true
	}
	for _, e := range entries {
		name := e.Name()
		id, isInfo := strings.CutSuffix(name, ".json")
		switch {
		case isInfo && vfstorage.ValidUploadID(id):
		case vfstorage.ValidUploadID(name) && names[name+".json"]:
			continue // bytes, seen with their description
		default:
			// Bytes without a description, a half-written description,
			// anything else: removed once as old as an upload's lifetime.
			if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) >= s.cfg.UploadTTL {
				root.RemoveAll(resumableDir + "/" + name)
			}
			continue
		}
		raw, err := root.ReadFile(infoName(id))
		var info uploadInfo
		if err == nil {
			err = json.Unmarshal(raw, &info)
		}
		if err != nil {
			continue
		}
		data, err := root.Lstat(dataName(id))
		if errors.Is(err, fs.ErrNotExist) {
			root.Remove(infoName(id))
			continue
		} else if err != nil {
			continue
		}
		if now.Before(s.expiresAt(info, data.ModTime())) {
			live += info.Length
			continue
		}
		removeUpload(root, id)
		removed += info.Length
		expired++
	}
	return live, removed, expired
}

// ExpireUploads removes the expired uploads of every folder of every host.
func (s *Storage) ExpireUploads(ctx context.Context) (int, error) {
	const op = "vfstorage.expire-uploads"
	total := 0
	for _, h := range s.infos {
		err := s.FolderDirs(ctx, h.Name, func(d vfstorage.FolderDir) error {
			root, err := s.openFolder(op, d.Ref)
			if err != nil {
				return nil // gone meanwhile
			}
			defer root.Close()
			if _, err := root.Lstat(resumableDir); err != nil {
				return nil
			}
			st := s.state(d.Ref)
			st.mu.Lock()
			defer st.mu.Unlock()
			_, removed, n := s.scanUploads(root, s.now())
			st.add(-removed, 0)
			total += n
			return nil
		})
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// RunUploadExpiry calls ExpireUploads every interval (an eighth of the
// upload lifetime, between a second and ten minutes) until ctx ends.
func (s *Storage) RunUploadExpiry(ctx context.Context) error {
	every := min(max(s.cfg.UploadTTL/8, time.Second), 10*time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		n, err := s.ExpireUploads(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn("expiring resumable uploads", slog.Any("err", err))
		case n > 0:
			s.log.Info("resumable uploads expired", slog.Int("count", n))
		}
	}
}
