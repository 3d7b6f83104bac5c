package eventstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

func TestFileErrorTranslatesAFullDisk(t *testing.T) {
	full := &os.PathError{Op: "write", Path: "/data/x", Err: syscall.ENOSPC}
	err := eventstore.FileError("save", full)
	if !errors.Is(err, eventstore.ErrStorageFull) || domain.KindOf(err) != domain.KindUnavailable || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("FileError(ENOSPC) = %v (kind %s)", err, domain.KindOf(err))
	}
	if again := eventstore.StorageFull("outer", err); again != err {
		t.Errorf("StorageFull of a translated error wraps it again: %v", again)
	}
	_, missing := os.ReadFile(filepath.Join(t.TempDir(), "missing"))
	err = eventstore.FileError("load", missing)
	if errors.Is(err, eventstore.ErrStorageFull) || !errors.Is(err, os.ErrNotExist) || domain.KindOf(err) != domain.KindInternal {
		t.Errorf("FileError(not exist) = %v", err)
	}
	if eventstore.FileError("x", nil) != nil {
		t.Error("FileError(nil) != nil")
	}
}
