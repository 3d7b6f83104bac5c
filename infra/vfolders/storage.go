package vfolders

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/vfolderjobs"
	"github.com/cairnhq/cairn/commands/vfolderorphans"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/dispatch/forwarder"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

// Storage adapts a vfstorage.Storage to the ports of the commands, the
// vfolder jobs and the forwarder.
type Storage struct {
	S vfstorage.Storage
}

var (
	_ commands.VFolderStorage    = Storage{}
	_ vfolderjobs.Storage        = Storage{}
	_ forwarder.MountSources     = Storage{}
	_ vfolderorphans.Directories = Storage{}
)

func ref(host string, id uuid.UUID) vfstorage.Ref { return vfstorage.Ref{Host: host, ID: id} }

// HasHost reports whether host is configured.
func (s Storage) HasHost(host string) bool {
	return slices.ContainsFunc(s.S.Hosts(), func(h vfstorage.HostInfo) bool { return h.Name == host })
}

// HostNames lists the configured hosts.
func (s Storage) HostNames() []string {
	var names []string
	for _, h := range s.S.Hosts() {
		names = append(names, h.Name)
	}
	return names
}

func (s Storage) CreateFolder(ctx context.Context, host string, id uuid.UUID) error {
	return s.S.CreateFolder(ctx, ref(host, id))
}

func (s Storage) DeleteFolder(ctx context.Context, host string, id uuid.UUID) error {
	return s.S.DeleteFolder(ctx, ref(host, id))
}

// CloneFolder copies src into dst. A dst that exists is the complete copy
// of an earlier run (vfstorage makes it appear only complete): success.
func (s Storage) CloneFolder(ctx context.Context, srcHost string, src uuid.UUID, dstHost string, dst uuid.UUID) error {
	err := s.S.CloneFolder(ctx, ref(srcHost, src), ref(dstHost, dst), nil)
	if errors.Is(err, vfstorage.ErrExists) {
		return nil
	}
	return err
}

// UsedBytes is the folder's usage in bytes; a folder without data holds 0.
func (s Storage) UsedBytes(ctx context.Context, host string, id uuid.UUID) (int64, error) {
	u, err := s.S.Usage(ctx, ref(host, id))
	if errors.Is(err, vfstorage.ErrNoFolder) {
		return 0, nil
	}
	return u.Bytes, err
}

// MountSource is the folder's directory on this machine.
func (s Storage) MountSource(host string, id uuid.UUID) (string, error) {
	return s.S.MountSource(ref(host, id))
}

// collector is the backend's vfstorage.Collector; a backend without one
// has no orphans collected.
func (s Storage) collector(op string) (vfstorage.Collector, error) {
	c, ok := s.S.(vfstorage.Collector)
	if !ok {
		return nil, domain.Errorf(op, domain.KindUnavailable, "the storage backend cannot list its folder directories")
	}
	return c, nil
}

// FolderDirs lists a host's folder directories.
func (s Storage) FolderDirs(ctx context.Context, host string, fn func(vfolderorphans.Dir) error) error {
	c, err := s.collector("vfolder.folder-dirs")
	if err != nil {
		return err
	}
	return c.FolderDirs(ctx, host, func(d vfstorage.FolderDir) error {
		return fn(vfolderorphans.Dir{Host: d.Ref.Host, ID: d.Ref.ID, ModTime: d.ModTime})
	})
}

// SetAside moves a folder directory to its host's lost+found.
func (s Storage) SetAside(ctx context.Context, host string, id uuid.UUID) (string, error) {
	c, err := s.collector("vfolder.set-aside")
	if err != nil {
		return "", err
	}
	return c.SetAside(ctx, ref(host, id))
}
