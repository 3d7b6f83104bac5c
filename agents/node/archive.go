package node

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/runtime"
)

// logArchive keeps the logs of removed kernels, one file each in
// <data dir>/logs, so that they stay readable after the session ends.
type logArchive struct {
	dir string
	max int // bytes kept per kernel: the most recent output
}

func openLogArchive(dataDir string, maxBytes int) (*logArchive, error) {
	dir := filepath.Join(dataDir, "logs")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("log archive: %w", err)
	}
	return &logArchive{dir: dir, max: maxBytes}, nil
}

func (a *logArchive) path(id uuid.UUID) string { return filepath.Join(a.dir, id.String()+".log") }

// save keeps the last max bytes of logs, replacing what was kept.
func (a *logArchive) save(id uuid.UUID, logs []byte) error {
	if len(logs) > a.max {
		logs = logs[len(logs)-a.max:]
	}
	tmp := a.path(id) + ".tmp"
	if err := os.WriteFile(tmp, logs, 0o640); err != nil {
		return fmt.Errorf("log archive: %w", err)
	}
	if err := os.Rename(tmp, a.path(id)); err != nil {
		return fmt.Errorf("log archive: %w", err)
	}
	return nil
}

// read returns the kept logs as runtime.Runtime.Logs would: the last
// opts.Tail lines, at most opts.MaxBytes bytes.
func (a *logArchive) read(id uuid.UUID, opts runtime.LogOptions) ([]byte, bool, error) {
	data, err := os.ReadFile(a.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("log archive: %w", err)
	}
	return tail(data, opts.WithDefaults()), true, nil
}

// forget deletes the kernel's logs.
func (a *logArchive) forget(id uuid.UUID) error {
	if err := os.Remove(a.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("log archive: %w", err)
	}
	return nil
}

// tail keeps the last opts.Tail lines (all if 0) of data, then at most
// its last opts.MaxBytes bytes.
func tail(data []byte, opts runtime.LogOptions) []byte {
	if opts.Tail > 0 {
		end := len(data)
		if end > 0 && data[end-1] == '\n' {
			end-- // the final newline ends the last line, it does not start one
		}
		start, lines := end, 0
		for start > 0 {
			i := bytes.LastIndexByte(data[:start], '\n')
			lines++
			if lines == opts.Tail || i < 0 {
				start = i + 1
				break
			}
			start = i
		}
		data = data[start:]
	}
	if opts.MaxBytes > 0 && len(data) > opts.MaxBytes {
		data = data[len(data)-opts.MaxBytes:]
	}
	return data
}
