package accelerator

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairnhq/cairn/domain"
)

// CDIKind is the CDI kind NVIDIA's container toolkit declares GPUs and MIG
// devices under (nvidia-ctk cdi generate); a device is injected by its
// qualified name, CDIKind + "=" + name.
const CDIKind = "nvidia.com/gpu"

// DefaultCDIDirs are where container runtimes (Podman included) look for
// CDI specs, lowest priority first.
var DefaultCDIDirs = []string{"/etc/cdi", "/var/run/cdi"}

// maxCDISpecBytes bounds what DetectCDI reads of one file: a spec for a
// large node is tens of kilobytes.
const maxCDISpecBytes = 16 << 20

// CDIInfo is what DetectCDI found about NVIDIA CDI specs. The zero value
// means no spec: GPUs are handed over by NVIDIA_VISIBLE_DEVICES.
type CDIInfo struct {
	// Specs are the spec files declaring kind nvidia.com/gpu, in the order read.
	Specs []string
	// Devices are the device names those specs declare, sorted and unique:
	// "GPU-<uuid>" and "MIG-<uuid>" (uuid naming), "0" and "0:1" (index
	// naming), "all".
	Devices []string
	// Skipped are spec files that could not be read or parsed, each with the
	// reason; they are ignored, as the container runtime ignores them.
	Skipped []error
}

// Found reports whether an NVIDIA CDI spec exists.
func (c CDIInfo) Found() bool { return len(c.Specs) > 0 }

// Has reports whether a spec declares the device name (unqualified, e.g.
// "GPU-<uuid>" or "0").
func (c CDIInfo) Has(name string) bool {
	_, ok := slices.BinarySearch(c.Devices, name)
	return ok
}

// QualifiedName returns the fully qualified CDI name of a device name:
// QualifiedName("GPU-1") is "nvidia.com/gpu=GPU-1".
func QualifiedName(name string) string { return CDIKind + "=" + name }

// DetectCDI looks for NVIDIA CDI specs (*.json, *.yaml, *.yml whose kind is
// nvidia.com/gpu) in dirs and their sub-directories, DefaultCDIDirs when
// none are given. A missing directory is not an error (most nodes have
// only one of them); a directory that exists but cannot be read is. Files
// that cannot be parsed are listed in Skipped and otherwise ignored.
//
// Only the kind and the device names are read: enough to know whether the
// runtime can inject a device by name, not a validation of the spec.
func DetectCDI(dirs ...string) (CDIInfo, error) {
	if len(dirs) == 0 {
		dirs = DefaultCDIDirs
	}
	var info CDIInfo
	names := map[string]bool{}
	visit := func(path string, d fs.DirEntry) error {
		if d.IsDir() || !isCDISpecFile(path) {
			return nil
		}
		kind, devices, err := readCDISpec(path)
		switch {
		case err != nil:
			info.Skipped = append(info.Skipped, fmt.Errorf("cdi spec %s: %w", path, err))
		case kind == CDIKind:
			info.Specs = append(info.Specs, path)
			for _, n := range devices {
				names[n] = true
			}
		}
		return nil
	}
	for _, dir := range dirs {
		root, err := filepath.EvalSymlinks(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
				switch {
				case err != nil && path == root:
					return err
				case err != nil:
					info.Skipped = append(info.Skipped, fmt.Errorf("cdi spec %s: %w", path, err))
					return nil
				}
				return visit(path, d)
			})
		}
		if err != nil {
			return CDIInfo{}, &domain.Error{Op: "accelerator.detect-cdi", Kind: domain.KindInternal, Message: "reading CDI specs in " + dir, Err: err}
		}
	}
	for n := range names {
		info.Devices = append(info.Devices, n)
	}
	slices.Sort(info.Devices)
	return info, nil
}

func isCDISpecFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json", ".yaml", ".yml":
		return true
	}
	return false
}

// readCDISpec reads one spec file (following a symlink to it).
func readCDISpec(path string) (kind string, devices []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCDISpecBytes+1))
	if err != nil {
		return "", nil, err
	}
	if len(data) > maxCDISpecBytes {
		return "", nil, fmt.Errorf("larger than %d bytes", maxCDISpecBytes)
	}
	return parseCDISpec(data, strings.EqualFold(filepath.Ext(path), ".json"))
}

// cdiSpec is the part of a CDI spec DetectCDI needs.
type cdiSpec struct {
	Kind    string `json:"kind" yaml:"kind"`
	Devices []struct {
		Name string `json:"name" yaml:"name"`
	} `json:"devices" yaml:"devices"`
}

// parseCDISpec decodes a spec's kind and device names, from JSON or YAML.
// A spec without a kind, or with an unnamed device, is an error.
func parseCDISpec(data []byte, isJSON bool) (kind string, devices []string, err error) {
	var spec cdiSpec
	if isJSON {
		err = json.Unmarshal(data, &spec)
	} else {
		err = yaml.Unmarshal(data, &spec)
	}
	if err != nil {
		return "", nil, err
	}
	if spec.Kind == "" {
		return "", nil, errors.New("no kind")
	}
	for _, d := range spec.Devices {
		if d.Name == "" {
			return "", nil, errors.New("a device has no name")
		}
		devices = append(devices, d.Name)
	}
	return spec.Kind, devices, nil
}
