// Package images is the walking skeleton's image catalog: the images a
// session may name. `cairn dev` registers the local base image
// (scripts/install-podman.sh builds it), those given with --image, and
// the localhost/cairn/* images its Podman has (infra/bootstrap); the
// admins' image registry (architecture, slot limits, labels) replaces it
// later behind the same question, Known.
package images

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// BaseImage is the image scripts/install-podman.sh builds from Debian's
// busybox-static.
const BaseImage = "localhost/cairn/base:latest"

// Static is a fixed set of image references. It is safe for concurrent
// use.
type Static struct {
	mu   sync.RWMutex
	refs map[string]bool
}

// NewStatic returns a catalog of refs, each checked as Register does.
func NewStatic(refs ...string) (*Static, error) {
	s := &Static{refs: make(map[string]bool, len(refs))}
	for _, ref := range refs {
		if err := s.Register(ref); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Register adds ref. A reference without a tag or digest means its
// "latest" tag, as for Podman.
func (s *Static) Register(ref string) error {
	if err := Validate(ref); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refs[Normalize(ref)] = true
	return nil
}

// Known reports whether ref names a registered image: exactly, or with
// the implicit "latest" tag added.
func (s *Static) Known(ref string) bool {
	if Validate(ref) != nil {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.refs[Normalize(ref)]
}

// List returns the registered references, sorted.
func (s *Static) List() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.refs))
	for ref := range s.refs {
		out = append(out, ref)
	}
	slices.Sort(out)
	return out
}

// Validate checks that ref looks like an image reference: not empty, no
// spaces or control characters, no empty path component.
func Validate(ref string) error {
	switch {
	case ref == "":
		return fmt.Errorf("image reference: empty")
	case strings.IndexFunc(ref, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return fmt.Errorf("image reference %q: contains spaces or control characters", ref)
	case strings.HasPrefix(ref, "/") || strings.HasSuffix(ref, "/") || strings.Contains(ref, "//"):
		return fmt.Errorf("image reference %q: empty path component", ref)
	case strings.HasSuffix(ref, ":") || strings.HasSuffix(ref, "@"):
		return fmt.Errorf("image reference %q: empty tag or digest", ref)
	}
	return nil
}

// Normalize adds the "latest" tag to a reference that has neither a tag
// nor a digest. A colon in an earlier path component is a registry's port,
// not a tag.
func Normalize(ref string) string {
	if strings.Contains(ref, "@") {
		return ref
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	if strings.Contains(last, ":") {
		return ref
	}
	return ref + ":latest"
}
