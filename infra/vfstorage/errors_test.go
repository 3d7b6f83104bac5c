package vfstorage

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cairnhq/cairn/domain"
)

func TestFail(t *testing.T) {
	tests := []struct {
		reason error
		kind   domain.Kind
		field  string
		msg    string
	}{
		{ErrInvalidPath, domain.KindInvalid, "path", `test: path: "a/b": invalid path`},
		{ErrUnknownHost, domain.KindInvalid, "path", `test: path: "a/b": unknown storage host`},
		{ErrNotFound, domain.KindNotFound, "", `test: "a/b": no such file or directory`},
		{ErrNoFolder, domain.KindNotFound, "", `test: "a/b": folder data not found`},
		{ErrExists, domain.KindConflict, "", `test: "a/b": already exists`},
		{ErrNotDir, domain.KindConflict, "", `test: "a/b": not a directory`},
		{ErrIsDir, domain.KindConflict, "", `test: "a/b": is a directory`},
		{ErrNotEmpty, domain.KindConflict, "", `test: "a/b": directory not empty`},
		{ErrNotRegular, domain.KindConflict, "", `test: "a/b": not a regular file`},
		{ErrTooLarge, domain.KindTooLarge, "", `test: "a/b": over the size limit`},
		{ErrQuotaExceeded, domain.KindQuotaExceeded, "", `test: "a/b": over the quota`},
		{ErrPermission, domain.KindForbidden, "", `test: "a/b": permission denied on storage`},
		{ErrNoSpace, domain.KindUnavailable, "", `test: "a/b": no space left on storage host`},
	}
	for _, tt := range tests {
		err := fmt.Errorf("wrapped: %w", Fail("test", "path", "a/b", tt.reason))
		var de *domain.Error
		if !errors.As(err, &de) {
			t.Fatalf("%v: not a *domain.Error", tt.reason)
		}
		if de.Kind != tt.kind || de.Field != tt.field || !errors.Is(err, tt.reason) || de.Error() != tt.msg {
			t.Errorf("Fail(%v) = %+v %q; want kind %v field %q %q", tt.reason, de, de.Error(), tt.kind, tt.field, tt.msg)
		}
		for _, other := range []error{ErrNotFound, ErrExists} {
			if other != tt.reason && errors.Is(err, other) {
				t.Errorf("Fail(%v) matches %v", tt.reason, other)
			}
		}
	}
	if k := KindOfReason(errors.New("other")); k != domain.KindInternal {
		t.Fatalf("KindOfReason(other) = %v", k)
	}
	err := Failf("test", "path", "", ErrInvalidPath, "leads outside the folder")
	if got := err.Error(); got != "test: path: leads outside the folder: invalid path" {
		t.Fatalf("Failf without a path: %q", got)
	}
	cause := errors.New("disk on fire")
	if err := Internal("test", cause); domain.KindOf(err) != domain.KindInternal || !errors.Is(err, cause) {
		t.Fatalf("Internal: %v", err)
	}
}
