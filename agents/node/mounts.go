package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/cairnhq/cairn/agents/runtime"
)

// claimMounts hands a kernel in a user namespace what it may write: every
// entry of each read-write mount (the folder itself included) whose owner
// or group is no id of m is given to m's root, m.HostID, on the host. Files
// the manager's file API wrote (as host root) and folders it made would
// otherwise be nobody's inside the kernel, read-only to its root; entries
// a kernel made (ids of m, its users' included) are left as they are.
// Read-only mounts are not touched. It returns how many entries it changed.
//
// The walk goes through os.Root and never follows a symbolic link out of
// the folder, so a kernel that swaps a directory for a link while another
// of its kernels starts cannot make the agent chown anything outside. It
// stats every entry of a read-write folder at each kernel creation, and
// stops when ctx ends (a destroy interrupts it).
func claimMounts(ctx context.Context, mounts []runtime.Mount, m runtime.IDMap) (int, error) {
	total := 0
	for _, mt := range mounts {
		if mt.ReadOnly {
			continue
		}
		n, err := claimTree(ctx, mt.Source, m)
		total += n
		if err != nil {
			return total, fmt.Errorf("mount %s: give it to the kernel's user namespace (host id %d): %w", mt.Source, m.HostID, err)
		}
	}
	return total, nil
}

func claimTree(ctx context.Context, dir string, m runtime.IDMap) (int, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	claimed := 0
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			// A running kernel sharing the folder removed it meanwhile.
			if errors.Is(err, fs.ErrNotExist) && p != "." {
				return nil
			}
			return err
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: no owner information", p)
		}
		uid, gid := -1, -1 // -1: leave as it is
		if !m.Contains(st.Uid) {
			uid = int(m.HostID)
		}
		if !m.Contains(st.Gid) {
			gid = int(m.HostID)
		}
		if uid == -1 && gid == -1 {
			return nil
		}
		if err := root.Lchown(p, uid, gid); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		claimed++
		return nil
	})
	return claimed, err
}
