package commands

import (
	"errors"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// storeError translates an event store error into a domain error of the
// matching kind, keeping the original in the chain (errors.Is still sees
// eventstore.ErrWrongExpectedRevision, context.Canceled, ...).
func storeError(op string, err error) error {
	return &domain.Error{Op: op, Kind: storeErrorKind(err), Err: err}
}

// storeErrorKind: a revision conflict or a duplicate event id is a
// conflict, a missing stream not-found, a refused event invalid; a closed
// or failing store, a context that ended, or a deposed leader's fenced
// append (eventstore.ErrFenced: another replica leads now) is unavailable
// (try again, here or elsewhere).
func storeErrorKind(err error) domain.Kind {
	switch {
	case errors.Is(err, eventstore.ErrWrongExpectedRevision), errors.Is(err, eventstore.ErrDuplicateEvent):
		return domain.KindConflict
	case errors.Is(err, eventstore.ErrStreamNotFound):
		return domain.KindNotFound
	case errors.Is(err, eventstore.ErrInvalidEvent):
		return domain.KindInvalid
	}
	return domain.KindUnavailable
}

// definitelyNotWritten reports whether a failed Append certainly wrote
// nothing: the store refused it before writing. Any other failure (I/O, a
// cancelled context, a closed store) leaves it open whether the events
// were committed.
func definitelyNotWritten(err error) bool {
	return errors.Is(err, eventstore.ErrWrongExpectedRevision) ||
		errors.Is(err, eventstore.ErrInvalidEvent) ||
		errors.Is(err, eventstore.ErrDuplicateEvent) ||
		errors.Is(err, eventstore.ErrStreamNotFound) ||
		errors.Is(err, eventstore.ErrFenced)
}

// uncertainAppendError marks an append whose outcome is unknown: the
// events may or may not have been committed.
type uncertainAppendError struct {
	stream string
	err    error
}

func (e *uncertainAppendError) Error() string {
	return "append to " + e.stream + " may or may not have been written: " + e.err.Error()
}

func (e *uncertainAppendError) Unwrap() error { return e.err }

// appendUncertain reports whether err comes from an append that may have
// been written.
func appendUncertain(err error) bool {
	var u *uncertainAppendError
	return errors.As(err, &u)
}
