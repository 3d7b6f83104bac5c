package vfstorage

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairnhq/cairn/domain"
)

func TestCleanPath(t *testing.T) {
	tests := []struct {
		in, want string // want "" means refused
	}{
		{"", "."},
		{".", "."},
		{"./", "."},
		{"././/.", "."},
		{"a", "a"},
		{"a/b/c", "a/b/c"},
		{"a//b/", "a/b"},
		{"./a/./b/.", "a/b"},
		{"a/.b/..c/c..", "a/.b/..c/c.."},
		{"sp ace/ünï/流🙂", "sp ace/ünï/流🙂"},
		{"back\\slash", "back\\slash"},
		{"sub/" + ReservedName + "/x", "sub/" + ReservedName + "/x"},
		{ReservedName + "x", ReservedName + "x"},
		{strings.Repeat("n", 255), strings.Repeat("n", 255)},
		{"..", ""},
		{"../a", ""},
		{"a/..", ""},
		{"a/../b", ""},
		{"a/../../x", ""},
		{"/", ""},
		{"/a", ""},
		{"//a", ""},
		{"a\x00b", ""},
		{"\xff", ""},
		{ReservedName, ""},
		{"./" + ReservedName + "/f", ""},
		{ReservedName + "/", ""},
		{strings.Repeat("n", 256), ""},
		{strings.Repeat("d/", 2048), ""},
	}
	for _, tt := range tests {
		got, err := CleanPath("test", "path", tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("CleanPath(%q) = %q, want refused", tt.in, got)
				continue
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != domain.KindInvalid || de.Field != "path" || !errors.Is(err, ErrInvalidPath) {
				t.Errorf("CleanPath(%q): %#v, want an invalid-path error about field path", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestCleanName(t *testing.T) {
	for in, ok := range map[string]bool{
		"a": true, ReservedName: true, "a.b": true,
		"": false, ".": false, "..": false, "a/b": false, "a/": false, "/a": false, "a\x00": false,
	} {
		got, err := CleanName("test", "after", in)
		if ok != (err == nil) || (ok && got != in) {
			t.Errorf("CleanName(%q) = %q, %v", in, got, err)
		}
	}
}

// FuzzCleanPath: whatever comes in, what comes out is a valid, relative
// io/fs path with no ".." and no NUL, outside the reserved directory, and
// cleaning it again changes nothing.
func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"", ".", "a/b", "../x", "a/../../x", "/etc/passwd", "a\x00b", ReservedName + "/x", "./a//b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := CleanPath("fuzz", "path", in)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || !errors.Is(err, ErrInvalidPath) {
				t.Fatalf("CleanPath(%q): %v is not an invalid-path error", in, err)
			}
			return
		}
		if !fs.ValidPath(got) || !utf8.ValidString(got) || strings.ContainsRune(got, 0) || len(got) > MaxPathLen {
			t.Fatalf("CleanPath(%q) = %q: not a valid relative path", in, got)
		}
		for part := range strings.SplitSeq(got, "/") {
			if part == ".." || (part == "." && got != ".") || len(part) > MaxNameLen {
				t.Fatalf("CleanPath(%q) = %q: component %q", in, got, part)
			}
		}
		if got == ReservedName || strings.HasPrefix(got, ReservedName+"/") {
			t.Fatalf("CleanPath(%q) = %q: into the reserved directory", in, got)
		}
		if again, err := CleanPath("fuzz", "path", got); err != nil || again != got {
			t.Fatalf("CleanPath(CleanPath(%q)) = %q, %v; want %q", in, again, err, got)
		}
	})
}
