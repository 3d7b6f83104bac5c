package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Default size of a terminal whose spec gives none.
const (
	DefaultTerminalCols = 80
	DefaultTerminalRows = 24
)

// MaxTerminalSize bounds a terminal's columns and rows (a pseudo-terminal's
// size is two 16-bit numbers; beyond a few thousand it is a mistake).
const MaxTerminalSize = 4096

// TerminalSpec is what ExecTerminal runs.
type TerminalSpec struct {
	// Command is the process and its arguments; required.
	Command []string
	// Env is added to the container's environment (KEY=value).
	Env []string
	// Cols and Rows are the terminal's initial size; 0 takes the defaults.
	Cols, Rows int
}

// WithDefaults returns s with its zero size set to the defaults.
func (s TerminalSpec) WithDefaults() TerminalSpec {
	if s.Cols == 0 {
		s.Cols = DefaultTerminalCols
	}
	if s.Rows == 0 {
		s.Rows = DefaultTerminalRows
	}
	return s
}

// Validate reports an empty command or a bad size; each matches ErrInvalid.
func (s TerminalSpec) Validate() error {
	var errs []error
	if len(s.Command) == 0 {
		errs = append(errs, fmt.Errorf("%w: terminal command is empty", ErrInvalid))
	}
	if s.Cols < 0 || s.Rows < 0 {
		errs = append(errs, fmt.Errorf("%w: terminal size %dx%d is negative", ErrInvalid, s.Cols, s.Rows))
	} else if d := s.WithDefaults(); d.Cols > MaxTerminalSize || d.Rows > MaxTerminalSize {
		errs = append(errs, ValidateTerminalSize(d.Cols, d.Rows))
	}
	return errors.Join(errs...)
}

// ValidateTerminalSize reports a size outside 1..MaxTerminalSize, as
// ErrInvalid.
func ValidateTerminalSize(cols, rows int) error {
	if cols < 1 || cols > MaxTerminalSize || rows < 1 || rows > MaxTerminalSize {
		return fmt.Errorf("%w: terminal size %dx%d is outside 1x1..%dx%d", ErrInvalid, cols, rows, MaxTerminalSize, MaxTerminalSize)
	}
	return nil
}

// Terminal is a process running with a pseudo-terminal in a container,
// attached: Read returns what it writes to the terminal (raw bytes, the
// terminal's echo of input included), Write types into it. Read returns
// io.EOF once the process has exited and its output is read. Reads and
// writes may run concurrently with each other and with Resize.
type Terminal interface {
	io.Reader
	io.Writer
	// Resize sets the terminal's size, in characters.
	Resize(ctx context.Context, cols, rows int) error
	// ExitCode waits until the process has exited and returns its exit
	// code (a signal's is 128+signal), or ctx's error.
	ExitCode(ctx context.Context) (int, error)
	// Close ends the attachment and the process: the process gets the
	// hang-up a closed terminal gives, and is killed if it ignores it.
	// Read and Write then fail. It may be called more than once.
	Close() error
}
