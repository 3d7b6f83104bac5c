package node

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

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

// save keeps the last max bytes of logs, whose first byte is at offset
// start of the kernel's log, replacing what was kept. The offset of the
// first byte kept goes to a file of its own beside them, so that reads by
// offset stay true after the beginning was cut.
func (a *logArchive) save(id uuid.UUID, logs []byte, start int64) error {
	if len(logs) > a.max {
		start += int64(len(logs) - a.max)
		logs = logs[len(logs)-a.max:]
	}
	if err := writeAtomic(a.startPath(id), []byte(strconv.FormatInt(start, 10))); err != nil {
		return err
	}
	return writeAtomic(a.path(id), logs)
}

// writeAtomic replaces path's content with data.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o640); err != nil {
		return fmt.Errorf("log archive: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("log archive: %w", err)
	}
	return nil
}

// startPath holds the log offset of the kept logs' first byte; an archive
// kept before offsets existed has none, and starts at 0.
func (a *logArchive) startPath(id uuid.UUID) string {
	return filepath.Join(a.dir, id.String()+".start")
}

// readRange writes the part of the kept logs r selects to w, as
// runtime.Runtime.StreamLogs would for an exited container: the log is
// complete, so a follow ends at once.
func (a *logArchive) readRange(id uuid.UUID, r runtime.LogRange, w io.Writer) (runtime.LogRead, bool, error) {
	data, err := os.ReadFile(a.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return runtime.LogRead{}, false, nil
	}
	if err != nil {
		return runtime.LogRead{}, false, fmt.Errorf("log archive: %w", err)
	}
	var start int64
	switch s, err := os.ReadFile(a.startPath(id)); {
	case err == nil:
		if start, err = strconv.ParseInt(string(s), 10, 64); err != nil {
			return runtime.LogRead{}, false, fmt.Errorf("log archive: start of kernel %s: %w", id, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return runtime.LogRead{}, false, fmt.Errorf("log archive: %w", err)
	}
	rw := runtime.NewRangeWriter(w, r, start)
	if _, err := rw.Write(data); err != nil {
		return runtime.LogRead{}, true, err
	}
	return rw.Result(true), true, nil
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
	for _, p := range []string{a.path(id), a.startPath(id)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("log archive: %w", err)
		}
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

// tailKeeper keeps the last max bytes written to it and counts them all.
type tailKeeper struct {
	max   int
	buf   []byte
	total int64
}

func (t *tailKeeper) Write(p []byte) (int, error) {
	t.total += int64(len(p))
	t.buf = append(t.buf, p...)
	// Trim lazily so a long log costs amortised O(n), not O(n*max).
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// kept returns the bytes kept and the log offset of the first one.
func (t *tailKeeper) kept() ([]byte, int64) {
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	return b, t.total - int64(len(b))
}
