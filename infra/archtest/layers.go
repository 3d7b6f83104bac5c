package archtest

import (
	"fmt"
	"slices"
	"strings"
)

// Layer is where a package sits in the rule, from the innermost out.
type Layer int

// The layers: domain ← commands / projections ← readapi / agents / infra / web ←
// cmd, with eventstore a port (and its backends) beside the domain.
const (
	Unknown Layer = iota
	Domain
	EventStore
	Commands
	Projections
	Adapters // readapi, agents, infra, web (the Web-UI's assets)
	Cmd      // cmd, and the end-to-end tests that drive its binary
)

var layerNames = [...]string{"unknown", "domain", "eventstore", "commands", "projections", "adapters", "cmd"}

func (l Layer) String() string { return layerNames[l] }

// Package is a package of the module and its non-test imports, as import
// paths.
type Package struct {
	Path    string
	Imports []string
}

// LayerOf returns the layer of a package path relative to the module root.
func LayerOf(rel string) Layer {
	top, _, _ := strings.Cut(rel, "/")
	switch top {
	case "domain":
		return Domain
	case "eventstore":
		return EventStore
	case "commands":
		return Commands
	case "projections":
		return Projections
	case "readapi", "agents", "infra", "web":
		return Adapters
	case "cmd", "e2e":
		return Cmd
	}
	return Unknown
}

// under reports whether rel is dir or a package below it.
func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// Check returns one message for every import among pkgs that breaks the
// layer rule; module is the module path, and imports outside it are
// ignored. The rule:
//   - domain imports no package of the module but domain/...;
//   - eventstore (the port and its backends) only domain/... and
//     eventstore/...;
//   - commands and projections nothing from readapi, agents, infra or cmd,
//     of the event store only the port (never a backend), and neither
//     imports the other (the write side decides from the store, the read
//     side folds the events);
//   - readapi (the query side) does not import the write side: commands
//     or infra/commandapi;
//   - nothing outside cmd imports cmd.
//
// No package is exempt; a package outside every layer is
// reported, so a new top-level folder has to be placed in the rule first.
func Check(module string, pkgs []Package) []string {
	var broken []string
	for _, p := range pkgs {
		rel, ok := relative(module, p.Path)
		if !ok {
			continue
		}
		from := LayerOf(rel)
		if from == Unknown {
			broken = append(broken, fmt.Sprintf("%s: the package is in no layer", rel))
			continue
		}
		for _, imp := range p.Imports {
			to, ok := relative(module, imp)
			if !ok {
				continue
			}
			if why := forbids(rel, from, to); why != "" {
				broken = append(broken, fmt.Sprintf("%s imports %s: %s", rel, to, why))
			}
		}
	}
	return broken
}

// WriteSide reports whether the package at rel (relative to the module)
// is the write side: commands or its HTTP port, infra/commandapi.
func WriteSide(rel string) bool {
	return LayerOf(rel) == Commands || under(rel, "infra/commandapi")
}

// LinkedWriteSide returns, sorted, the write-side packages among deps (the
// import paths a package depends on, directly or not).
func LinkedWriteSide(module string, deps []string) []string {
	var out []string
	for _, d := range deps {
		if rel, ok := relative(module, d); ok && WriteSide(rel) {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out
}

// relative returns path relative to the module, or false for a path
// outside it (the standard library, other modules).
func relative(module, path string) (string, bool) {
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}

// forbids returns why package rel (in layer from) may not import to, or
// "" when it may.
func forbids(rel string, from Layer, to string) string {
	toLayer := LayerOf(to)
	if toLayer == Cmd && from != Cmd {
		return "nothing imports cmd"
	}
	switch from {
	case Domain:
		if toLayer != Domain {
			return "domain imports only domain"
		}
	case EventStore:
		if toLayer != Domain && toLayer != EventStore {
			return "eventstore imports only domain and eventstore"
		}
	case Commands, Projections:
		switch {
		case toLayer == Adapters || toLayer == Unknown:
			return fmt.Sprintf("%s imports nothing from readapi, agents or infra", from)
		case toLayer == EventStore && to != "eventstore":
			return fmt.Sprintf("%s uses the eventstore port, never a backend", from)
		case (toLayer == Commands || toLayer == Projections) && toLayer != from:
			return "commands and projections do not import each other"
		}
	case Adapters:
		if under(rel, "readapi") && WriteSide(to) {
			return "readapi is the query side and does not import the write side"
		}
	}
	return ""
}
