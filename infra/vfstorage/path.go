package vfstorage

import (
	"strings"
	"unicode/utf8"
)

// ReservedName is the top-level entry of every folder that backends keep
// for themselves (localfs stages uploads in it). No path may start with it,
// and listings of the root do not show it.
const ReservedName = ".cairn-staging"

// Path limits, those of Linux: a name of at most 255 bytes, a path of at
// most 4095.
const (
	MaxNameLen = 255
	MaxPathLen = 4095
)

// CleanPath checks a folder-relative path from outside and returns its
// canonical form: components joined by single slashes, no "." components,
// no trailing slash, "." for the folder's root ("", ".", "./" ...). It
// refuses (ErrInvalidPath, field named by the caller) absolute paths, any
// ".." component, NUL bytes, invalid UTF-8, over-long names or paths, and
// paths into ReservedName.
func CleanPath(op, field, p string) (string, error) {
	c, err := clean(op, field, p)
	if err != nil {
		return "", err
	}
	if c == ReservedName || strings.HasPrefix(c, ReservedName+"/") {
		return "", Failf(op, field, p, ErrInvalidPath, "is reserved")
	}
	return c, nil
}

func clean(op, field, p string) (string, error) {
	switch {
	case strings.HasPrefix(p, "/"):
		return "", Failf(op, field, p, ErrInvalidPath, "is absolute; paths are relative to the folder")
	case strings.IndexByte(p, 0) >= 0:
		return "", Failf(op, field, p, ErrInvalidPath, "contains a NUL byte")
	case !utf8.ValidString(p):
		return "", Failf(op, field, p, ErrInvalidPath, "is not UTF-8")
	case len(p) > MaxPathLen:
		return "", Failf(op, field, p[:32]+"...", ErrInvalidPath, "is too long")
	}
	parts := make([]string, 0, strings.Count(p, "/")+1)
	for part := range strings.SplitSeq(p, "/") {
		switch {
		case part == "" || part == ".":
			continue
		case part == "..":
			return "", Failf(op, field, p, ErrInvalidPath, "has a \"..\" component")
		case len(part) > MaxNameLen:
			return "", Failf(op, field, p, ErrInvalidPath, "has a name over 255 bytes")
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ".", nil
	}
	return strings.Join(parts, "/"), nil
}

// CleanName checks a single name (a listing cursor): what CleanPath
// accepts, without slashes, not the root, and with ReservedName allowed (it
// is reserved at the top of a folder only).
func CleanName(op, field, name string) (string, error) {
	if strings.Contains(name, "/") {
		return "", Failf(op, field, name, ErrInvalidPath, "must be a single name")
	}
	c, err := clean(op, field, name)
	if err != nil {
		return "", err
	}
	if c == "." {
		return "", Failf(op, field, name, ErrInvalidPath, "must be a name")
	}
	return c, nil
}
