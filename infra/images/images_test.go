package images

import (
	"slices"
	"testing"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"localhost/cairn/base", "localhost/cairn/base:latest"},
		{"localhost/cairn/base:latest", "localhost/cairn/base:latest"},
		{"localhost:5000/cairn/base", "localhost:5000/cairn/base:latest"},
		{"localhost:5000/cairn/base:1.2", "localhost:5000/cairn/base:1.2"},
		{"busybox", "busybox:latest"},
		{"repo/img@sha256:abcd", "repo/img@sha256:abcd"},
	} {
		if got := Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStaticKnown(t *testing.T) {
	t.Parallel()
	s, err := NewStatic(BaseImage, "registry.example:5000/team/pytorch:2.4")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ref  string
		want bool
	}{
		{BaseImage, true},
		{"localhost/cairn/base", true},
		{"localhost/cairn/base:other", false},
		{"registry.example:5000/team/pytorch:2.4", true},
		{"registry.example:5000/team/pytorch", false},
		{"", false},
		{"localhost/cairn/base latest", false},
	} {
		if got := s.Known(tc.ref); got != tc.want {
			t.Errorf("Known(%q) = %v, want %v", tc.ref, got, tc.want)
		}
	}
	if got, want := s.List(), []string{BaseImage, "registry.example:5000/team/pytorch:2.4"}; !slices.Equal(got, want) {
		t.Errorf("List() = %v, want %v", got, want)
	}
}

func TestValidateRefuses(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{"", "a b", "/abs", "trailing/", "a//b", "img:", "img@", "tab\there"} {
		if _, err := NewStatic(ref); err == nil {
			t.Errorf("NewStatic(%q) accepted a bad reference", ref)
		}
	}
}
