package nvml

import (
	"errors"
	"slices"
	"testing"

	"github.com/cairnhq/cairn/domain"
)

func TestParseSpec(t *testing.T) {
	t.Parallel()
	tests := map[string]Spec{
		"nvml":                     {Source: SourceNVML},
		"nvml:/opt/lib/libnvml.so": {Source: SourceNVML, LibraryPath: "/opt/lib/libnvml.so"},
		" none ":                   {Source: SourceNone},
		"mock:dgxh100":             {Source: SourceMock, Mock: "dgxh100"},
		"mock:dgxa100?mig=3,0,3":   {Source: SourceMock, Mock: "dgxa100", MIG: []int{0, 3}},
		"mock:dgxb200?mig=all&profiles=3g.90gb,1g.23gb+me&seed=node-7": {
			Source: SourceMock, Mock: "dgxb200", MIGAll: true, Profiles: []string{"3g.90gb", "1g.23gb+me"}, Seed: "node-7",
		},
	}
	for in, want := range tests {
		got, err := ParseSpec(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got.Source != want.Source || got.LibraryPath != want.LibraryPath || got.Mock != want.Mock || got.MIGAll != want.MIGAll ||
			!slices.Equal(got.MIG, want.MIG) || !slices.Equal(got.Profiles, want.Profiles) || got.Seed != want.Seed {
			t.Errorf("%q: %+v, want %+v", in, got, want)
		}
		again, err := ParseSpec(got.String())
		if err != nil || again.String() != got.String() {
			t.Errorf("%q: String() %q does not parse back: %+v %v", in, got.String(), again, err)
		}
	}
}

func TestParseSpecRefuses(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"", "cuda", "none:x", "mock", "mock:", "mock:dgx1", "mock:dgxh100?mig=x", "mock:dgxh100?mig=-1",
		"mock:dgxh100?profiles=1g.10gb", "mock:dgxh100?mig=0&mig=1", "mock:dgxh100?color=red",
		"mock:dgxh100?mig=0&profiles=1g.10gb,,2g.20gb",
	} {
		if _, err := ParseSpec(in); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("%q: err = %v, want an invalid error", in, err)
		}
	}
}
