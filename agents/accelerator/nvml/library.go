//go:build cgo

package nvml

import (
	"errors"
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/cairnhq/cairn/agents/accelerator"
	"github.com/cairnhq/cairn/domain"
)

// Library is an initialised NVML (real or mock), or none. Its methods are
// safe for concurrent use; Close shuts NVML down.
type Library struct {
	mu     sync.Mutex
	spec   Spec
	lib    nvml.Interface // nil for SourceNone
	closed bool
}

// Discover initialises the NVML the spec names, enumerates its devices and
// shuts it down again, also when enumerating fails.
func Discover(spec string) (accelerator.Inventory, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return accelerator.Inventory{}, err
	}
	lib, err := library(s)
	if err != nil {
		return accelerator.Inventory{}, err
	}
	return discover(s, lib)
}

// discover is Discover on a given library (nil for SourceNone).
func discover(s Spec, lib nvml.Interface) (accelerator.Inventory, error) {
	l, err := open(s, lib)
	if err != nil {
		return accelerator.Inventory{}, err
	}
	inv, err := l.Inventory()
	if cerr := l.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return accelerator.Inventory{}, err
	}
	return inv, nil
}

// Open initialises the NVML the spec names; Close shuts it down. A missing
// libnvidia-ml.so.1 is KindUnavailable wrapping ErrLibraryNotFound and
// nvml.ERROR_LIBRARY_NOT_FOUND.
func Open(spec string) (*Library, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	lib, err := library(s)
	if err != nil {
		return nil, err
	}
	return open(s, lib)
}

// library returns the NVML a spec names, not yet initialised; nil for none.
func library(s Spec) (nvml.Interface, error) {
	switch s.Source {
	case SourceNVML:
		var opts []nvml.LibraryOption
		if s.LibraryPath != "" {
			opts = append(opts, nvml.WithLibraryPath(s.LibraryPath))
		}
		return nvml.New(opts...), nil
	case SourceMock:
		return newMock(s)
	}
	return nil, nil
}

// open initialises lib (nil: none), which the returned Library then owns.
func open(s Spec, lib nvml.Interface) (*Library, error) {
	if lib == nil {
		return &Library{spec: s}, nil
	}
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			path := s.LibraryPath
			if path == "" {
				path = defaultLibrary
			}
			return nil, &domain.Error{
				Op: "nvml.open", Kind: domain.KindUnavailable,
				Message: "is the NVIDIA driver (libnvidia-ml.so) installed? (the spec none runs without GPUs, mock:dgxh100 on a mock)",
				Err:     fmt.Errorf("%w: %s: %w", ErrLibraryNotFound, path, ret),
			}
		}
		return nil, nvmlError("nvml.open", ret, "initialising NVML")
	}
	return &Library{spec: s, lib: lib}, nil
}

// Spec is what the library was opened with.
func (l *Library) Spec() Spec { return l.spec }

// Inventory enumerates the GPUs and, for those in MIG mode, their MIG
// devices.
func (l *Library) Inventory() (accelerator.Inventory, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable("nvml.inventory"); err != nil || l.lib == nil {
		return accelerator.Inventory{}, err
	}
	return enumerate(l.lib)
}

// Utilization samples every whole GPU that is not in MIG mode (NVML does
// not sample MIG devices), in index order.
func (l *Library) Utilization() ([]accelerator.Utilization, error) {
	const op = "nvml.utilization"
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(op); err != nil || l.lib == nil {
		return nil, err
	}
	n, ret := l.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, nvmlError(op, ret, "counting GPUs")
	}
	var out []accelerator.Utilization
	for i := range n {
		dev, ret := l.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, nvmlError(op, ret, "GPU %d", i)
		}
		uuid, ret := dev.GetUUID()
		if ret != nvml.SUCCESS {
			return nil, nvmlError(op, ret, "GPU %d: uuid", i)
		}
		u, ret := dev.GetUtilizationRates()
		switch ret {
		case nvml.SUCCESS:
			out = append(out, accelerator.Utilization{DeviceID: uuid, GPUPercent: u.Gpu, MemoryPercent: u.Memory})
		case nvml.ERROR_NOT_SUPPORTED:
		default:
			return nil, nvmlError(op, ret, "GPU %s: utilization", uuid)
		}
	}
	return out, nil
}

// Close shuts NVML down. Closing twice is a no-op.
func (l *Library) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.lib == nil {
		return nil
	}
	if ret := l.lib.Shutdown(); ret != nvml.SUCCESS {
		return nvmlError("nvml.close", ret, "shutting NVML down")
	}
	return nil
}

func (l *Library) usable(op string) error {
	if l.closed {
		return domain.Errorf(op, domain.KindConflict, "NVML (%s) is closed", l.spec)
	}
	return nil
}

// nvmlError wraps an NVML return code (reachable with errors.Is, e.g.
// nvml.ERROR_NO_PERMISSION) as KindUnavailable: the driver did not give
// what was asked.
func nvmlError(op string, ret nvml.Return, format string, args ...any) error {
	return &domain.Error{Op: op, Kind: domain.KindUnavailable, Message: fmt.Sprintf(format, args...), Err: ret}
}
