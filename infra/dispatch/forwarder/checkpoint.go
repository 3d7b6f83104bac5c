package forwarder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/eventstore"
)

// Checkpoint keeps the position of the last event the forwarder is done
// with, across restarts.
type Checkpoint interface {
	// Load returns the saved position, 0 when none was saved.
	Load(ctx context.Context) (uint64, error)
	// Save durably records pos.
	Save(ctx context.Context, pos uint64) error
}

// FileCheckpoint is a Checkpoint in one small text file.
type FileCheckpoint struct {
	path string
}

var _ Checkpoint = (*FileCheckpoint)(nil)

// NewFileCheckpoint keeps the checkpoint at path (e.g.
// <data dir>/forwarder.checkpoint); its directory must exist.
func NewFileCheckpoint(path string) *FileCheckpoint { return &FileCheckpoint{path: path} }

// Load reads the position; a missing file is position 0, a file that does
// not hold a position is an error (rather than a silent restart from 0 or
// a skip).
func (c *FileCheckpoint) Load(context.Context) (uint64, error) {
	b, err := os.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("forwarder: read checkpoint: %w", err)
	}
	pos, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("forwarder: checkpoint %s does not hold a position: %w", c.path, err)
	}
	return pos, nil
}

// Save replaces the file atomically: a crash leaves the old position or
// the new one, never a torn file.
func (c *FileCheckpoint) Save(_ context.Context, pos uint64) error {
	dir := filepath.Dir(c.path)
	tmp, err := os.CreateTemp(dir, filepath.Base(c.path)+".*.tmp")
	if err != nil {
		return eventstore.FileError("forwarder: save checkpoint", err)
	}
	_, err = tmp.WriteString(strconv.FormatUint(pos, 10) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		if rerr := os.Remove(tmp.Name()); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		// A full disk is KindUnavailable (the forwarder keeps going and
		// saves at its next chance; a restart republishes more).
		return eventstore.FileError("forwarder: save checkpoint", err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
