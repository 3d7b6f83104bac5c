package eventstore

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// Sentinel errors for errors.Is. Every error a Store returns for one of
// these conditions matches the sentinel and can be unwrapped (errors.As)
// into the typed error carrying the details.
var (
	// ErrWrongExpectedRevision: the stream is not at the expected revision.
	// Typed as *WrongExpectedRevisionError.
	ErrWrongExpectedRevision = errors.New("eventstore: wrong expected revision")
	// ErrStreamNotFound: the stream has no events. Typed as *StreamNotFoundError.
	ErrStreamNotFound = errors.New("eventstore: stream not found")
	// ErrInvalidEvent: the append was refused before anything was written.
	// Typed as *InvalidEventError.
	ErrInvalidEvent = errors.New("eventstore: invalid event")
	// ErrDuplicateEvent: an event id is already stored in another stream, or
	// a retried append only partly matches what was stored. Typed as
	// *DuplicateEventError.
	ErrDuplicateEvent = errors.New("eventstore: duplicate event id")
	// ErrClosed: the store has been closed.
	ErrClosed = errors.New("eventstore: store closed")
)

// WrongExpectedRevisionError carries the revision the stream really has.
type WrongExpectedRevisionError struct {
	Stream   string
	Expected ExpectedRevision
	// Actual is the stream's last revision, -1 when the stream does not exist.
	Actual int64
}

func (e *WrongExpectedRevisionError) Error() string {
	return fmt.Sprintf("eventstore: stream %q: expected revision %s, actual %d", e.Stream, e.Expected, e.Actual)
}

// Is makes errors.Is(err, ErrWrongExpectedRevision) true.
func (e *WrongExpectedRevisionError) Is(target error) bool { return target == ErrWrongExpectedRevision }

// StreamNotFoundError names the missing stream.
type StreamNotFoundError struct{ Stream string }

func (e *StreamNotFoundError) Error() string {
	return fmt.Sprintf("eventstore: stream %q not found", e.Stream)
}

// Is makes errors.Is(err, ErrStreamNotFound) true.
func (e *StreamNotFoundError) Is(target error) bool { return target == ErrStreamNotFound }

// InvalidEventError says which event and which field of an append is wrong.
type InvalidEventError struct {
	// Index of the offending event in the append (in its part, for an
	// AppendMany), -1 when the problem is not tied to one event (e.g. an
	// empty stream name).
	Index  int
	Field  string
	Reason string
	// Stream is the stream of the offending part of an AppendMany (stream
	// names are unique in one); empty for Append and for a problem of the
	// whole call.
	Stream string
}

func (e *InvalidEventError) Error() string {
	var part string
	if e.Stream != "" {
		part = fmt.Sprintf(" (stream %.64q)", e.Stream)
	}
	if e.Index < 0 {
		return fmt.Sprintf("eventstore: invalid %s%s: %s", e.Field, part, e.Reason)
	}
	return fmt.Sprintf("eventstore: invalid event %d%s: %s: %s", e.Index, part, e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidEvent) true.
func (e *InvalidEventError) Is(target error) bool { return target == ErrInvalidEvent }

// DuplicateEventError names an event id that cannot be appended again.
type DuplicateEventError struct {
	ID uuid.UUID
	// Stream is the stream of the append that was refused.
	Stream string
	Reason string
}

func (e *DuplicateEventError) Error() string {
	return fmt.Sprintf("eventstore: event %s cannot be appended to %q: %s", e.ID, e.Stream, e.Reason)
}

// Is makes errors.Is(err, ErrDuplicateEvent) true.
func (e *DuplicateEventError) Is(target error) bool { return target == ErrDuplicateEvent }
