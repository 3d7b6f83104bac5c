package nvml

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/domain"
)

// Sources a spec can name.
const (
	SourceNVML = "nvml"
	SourceNone = "none"
	SourceMock = "mock"
)

// MockServers are the mock servers a mock spec can name, from go-nvml.
var MockServers = []string{"dgxa100", "dgxb200", "dgxh100", "dgxh200"}

// Spec is a parsed discovery spec.
type Spec struct {
	// Source is SourceNVML, SourceNone or SourceMock.
	Source string
	// LibraryPath is the NVML library to load (nvml:<path>); "" is the
	// driver's libnvidia-ml.so.1.
	LibraryPath string
	// Mock is the mock server (mock:<server>).
	Mock string
	// MIG lists, sorted, the mock GPUs put in MIG mode; MIGAll puts all.
	MIG    []int
	MIGAll bool
	// Profiles are the MIG profiles each mock MIG GPU is cut into, in
	// order; empty: as many 1-slice instances as fit.
	Profiles []string
	// Seed varies the mock's UUIDs (give each mock node its own).
	Seed string
}

// ParseSpec parses a discovery spec (see the package documentation). Errors
// are domain.ErrInvalid about the field "gpus", naming what is wrong.
func ParseSpec(s string) (Spec, error) {
	const op, field = "nvml.spec", "gpus"
	s = strings.TrimSpace(s)
	source, rest, _ := strings.Cut(s, ":")
	switch source {
	case SourceNone:
		if rest != "" {
			return Spec{}, domain.Invalid(op, field, "%q: none takes no argument", s)
		}
		return Spec{Source: SourceNone}, nil
	case SourceNVML:
		return Spec{Source: SourceNVML, LibraryPath: rest}, nil
	case SourceMock:
	default:
		return Spec{}, domain.Invalid(op, field, "%q: want nvml, nvml:<library path>, none or mock:<server> (%s)", s, strings.Join(MockServers, ", "))
	}
	server, query, _ := strings.Cut(rest, "?")
	if !slices.Contains(MockServers, server) {
		return Spec{}, domain.Invalid(op, field, "%q: unknown mock server %q (known: %s)", s, server, strings.Join(MockServers, ", "))
	}
	spec := Spec{Source: SourceMock, Mock: server}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, domain.Invalid(op, field, "%q: "+format, append([]any{s}, args...)...))
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(query, "&") {
		if kv == "" {
			continue
		}
		key, value, _ := strings.Cut(kv, "=")
		if seen[key] {
			bad("%s given twice", key)
			continue
		}
		seen[key] = true
		switch key {
		case "mig":
			if value == "all" {
				spec.MIGAll = true
				continue
			}
			for _, v := range strings.Split(value, ",") {
				i, err := strconv.Atoi(v)
				if err != nil || i < 0 {
					bad("mig: %q is not a GPU index (or all)", v)
					continue
				}
				if !slices.Contains(spec.MIG, i) {
					spec.MIG = append(spec.MIG, i)
				}
			}
			slices.Sort(spec.MIG)
		case "profiles":
			for _, p := range strings.Split(value, ",") {
				if p == "" {
					bad("profiles: an empty profile")
					continue
				}
				spec.Profiles = append(spec.Profiles, p)
			}
		case "seed":
			spec.Seed = value
		default:
			bad("unknown option %q (known: mig, profiles, seed)", key)
		}
	}
	if len(spec.Profiles) > 0 && len(spec.MIG) == 0 && !spec.MIGAll {
		bad("profiles given but no GPU in MIG mode (add mig=<indexes> or mig=all)")
	}
	if err := errors.Join(errs...); err != nil {
		return Spec{}, err
	}
	return spec, nil
}

// String renders the spec in the form ParseSpec reads.
func (s Spec) String() string {
	switch s.Source {
	case SourceNVML:
		if s.LibraryPath != "" {
			return SourceNVML + ":" + s.LibraryPath
		}
		return SourceNVML
	case SourceMock:
	default:
		return s.Source
	}
	var opts []string
	switch {
	case s.MIGAll:
		opts = append(opts, "mig=all")
	case len(s.MIG) > 0:
		idx := make([]string, len(s.MIG))
		for i, v := range s.MIG {
			idx[i] = strconv.Itoa(v)
		}
		opts = append(opts, "mig="+strings.Join(idx, ","))
	}
	if len(s.Profiles) > 0 {
		opts = append(opts, "profiles="+strings.Join(s.Profiles, ","))
	}
	if s.Seed != "" {
		opts = append(opts, "seed="+s.Seed)
	}
	out := SourceMock + ":" + s.Mock
	if len(opts) > 0 {
		out += "?" + strings.Join(opts, "&")
	}
	return out
}

// migMode reports whether the spec puts mock GPU i in MIG mode.
func (s Spec) migMode(i int) bool { return s.MIGAll || slices.Contains(s.MIG, i) }
