//go:build !cgo

package nvml

import (
	"github.com/cairnhq/cairn/agents/accelerator"
	"github.com/cairnhq/cairn/domain"
)

// Library stands in for the cgo implementation: built without cgo, only
// the none spec opens.
type Library struct{ spec Spec }

// Discover returns an empty inventory for none; every other spec needs a
// build with cgo.
func Discover(spec string) (accelerator.Inventory, error) {
	if _, err := Open(spec); err != nil {
		return accelerator.Inventory{}, err
	}
	return accelerator.Inventory{}, nil
}

// Open accepts only none without cgo.
func Open(spec string) (*Library, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	if s.Source != SourceNone {
		return nil, domain.Errorf("nvml.open", domain.KindUnavailable, "%s needs a build with cgo (CGO_ENABLED=1): go-nvml loads %s through cgo", s, defaultLibrary)
	}
	return &Library{spec: s}, nil
}

// Spec is what the library was opened with.
func (l *Library) Spec() Spec { return l.spec }

// Inventory is empty.
func (l *Library) Inventory() (accelerator.Inventory, error) { return accelerator.Inventory{}, nil }

// Utilization is empty.
func (l *Library) Utilization() ([]accelerator.Utilization, error) { return nil, nil }

// Close does nothing.
func (l *Library) Close() error { return nil }
