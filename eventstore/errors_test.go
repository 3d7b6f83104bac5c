package eventstore_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
)

func TestTypedErrorsMatchTheirSentinelOnly(t *testing.T) {
	t.Parallel()
	sentinels := []error{
		eventstore.ErrWrongExpectedRevision, eventstore.ErrStreamNotFound,
		eventstore.ErrInvalidEvent, eventstore.ErrDuplicateEvent, eventstore.ErrClosed,
	}
	tests := []struct {
		err  error
		want error
		as   func(error) bool
	}{
		{&eventstore.WrongExpectedRevisionError{Stream: "s", Expected: eventstore.Exact(1), Actual: 3}, eventstore.ErrWrongExpectedRevision,
			func(err error) bool {
				var e *eventstore.WrongExpectedRevisionError
				return errors.As(err, &e) && e.Actual == 3 && e.Expected == eventstore.Exact(1)
			}},
		{&eventstore.StreamNotFoundError{Stream: "s"}, eventstore.ErrStreamNotFound,
			func(err error) bool {
				var e *eventstore.StreamNotFoundError
				return errors.As(err, &e) && e.Stream == "s"
			}},
		{&eventstore.InvalidEventError{Index: 2, Field: "type", Reason: "empty"}, eventstore.ErrInvalidEvent,
			func(err error) bool {
				var e *eventstore.InvalidEventError
				return errors.As(err, &e) && e.Index == 2 && e.Field == "type"
			}},
		{&eventstore.DuplicateEventError{ID: uuid.Max, Stream: "s", Reason: "elsewhere"}, eventstore.ErrDuplicateEvent,
			func(err error) bool {
				var e *eventstore.DuplicateEventError
				return errors.As(err, &e) && e.ID == uuid.Max
			}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%T", tt.err), func(t *testing.T) {
			t.Parallel()
			if tt.err.Error() == "" {
				t.Error("Error() is empty")
			}
			// Backends wrap the typed error with context; matching survives.
			for _, err := range []error{tt.err, fmt.Errorf("sqlite: append: %w", tt.err)} {
				for _, s := range sentinels {
					if got, want := errors.Is(err, s), s == tt.want; got != want {
						t.Errorf("errors.Is(%v, %v) = %v, want %v", err, s, got, want)
					}
				}
				if !tt.as(err) {
					t.Errorf("errors.As(%v) did not recover the details", err)
				}
			}
		})
	}
}
