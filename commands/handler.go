package commands

import (
	"context"
	"fmt"
)

// Command is implemented by every command type. Its name is unique among
// the commands; the bus routes agents' commands by it.
type Command interface {
	CommandName() string
}

// Handler carries out one type of command.
type Handler[C Command, R any] interface {
	Handle(ctx context.Context, md Metadata, cmd C) (R, error)
}

// Result is what most handlers return: the global position of the last
// event they appended (see the package documentation).
type Result struct {
	Position uint64
}

// registry collects the handlers at start-up and refuses a command name
// registered twice.
type registry struct {
	names []string
	seen  map[string]bool
	errs  []error
}

func newRegistry() *registry { return &registry{seen: map[string]bool{}} }

// register records h under its command's name and returns it decorated
// (Audited), so a Handlers literal can list every handler once.
func register[C Command, R any](r *registry, h Handler[C, R]) Handler[C, R] {
	var zero C
	name := zero.CommandName()
	switch {
	case name == "":
		r.errs = append(r.errs, fmt.Errorf("commands: a %T handler has an empty command name", zero))
	case r.seen[name]:
		r.errs = append(r.errs, fmt.Errorf("commands: command %q registered twice", name))
	}
	r.seen[name] = true
	r.names = append(r.names, name)
	return Audited(h)
}
