package projections

import (
	"errors"
	"fmt"
)

// Sentinel errors for errors.Is.
var (
	// ErrDecode: a payload of a type the projection handles does not
	// decode. Typed as *EventError.
	ErrDecode = errors.New("projections: event does not decode")
	// ErrApply: Apply kept failing on an event. Typed as *EventError.
	ErrApply = errors.New("projections: event could not be applied")
	// ErrBusy: Run or Rebuild was called while the projector was already
	// running one of them.
	ErrBusy = errors.New("projections: projector is already running")
	// ErrStopped: WaitFor was asked for a position the projector will not
	// reach because it has stopped.
	ErrStopped = errors.New("projections: projector stopped")
)

// Phases of an EventError.
const (
	PhaseDecode = "decode"
	PhaseApply  = "apply"
)

// EventError says which event stopped a projector, and why.
type EventError struct {
	Projection string
	// Phase is PhaseDecode or PhaseApply.
	Phase    string
	Position uint64
	Stream   string
	Type     string
	Err      error
}

func (e *EventError) Error() string {
	return fmt.Sprintf("projections: %s: %s event at position %d (%s in stream %s): %v",
		e.Projection, e.Phase, e.Position, e.Type, e.Stream, e.Err)
}

func (e *EventError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrDecode) or errors.Is(err, ErrApply) true,
// according to the phase.
func (e *EventError) Is(target error) bool {
	return (target == ErrDecode && e.Phase == PhaseDecode) || (target == ErrApply && e.Phase == PhaseApply)
}
