package domain

import (
	"errors"
	"fmt"
)

// Kind classifies an error. Clients branch on the kind (errors.Is with the
// Err* sentinels, or KindOf); the HTTP layer maps kinds to status codes.
// Append-only: new kinds go at the end.
type Kind uint8

const (
	KindInternal        Kind = iota // a bug or an unexpected failure
	KindInvalid                     // bad input; the field is named
	KindNotFound                    // no such object (or not visible to the caller)
	KindConflict                    // the object's state forbids the operation
	KindForbidden                   // authenticated but not allowed
	KindUnauthenticated             // who is asking is unknown
	KindQuotaExceeded               // a limit would be exceeded
	KindUnavailable                 // try again later
	KindTooLarge                    // the request body is over a limit
)

var kindNames = [...]string{"internal", "invalid", "not-found", "conflict", "forbidden", "unauthenticated", "quota-exceeded", "unavailable", "too-large"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Sentinels for errors.Is: errors.Is(err, domain.ErrNotFound).
var (
	ErrInternal        = &Error{Kind: KindInternal}
	ErrInvalid         = &Error{Kind: KindInvalid}
	ErrNotFound        = &Error{Kind: KindNotFound}
	ErrConflict        = &Error{Kind: KindConflict}
	ErrForbidden       = &Error{Kind: KindForbidden}
	ErrUnauthenticated = &Error{Kind: KindUnauthenticated}
	ErrQuotaExceeded   = &Error{Kind: KindQuotaExceeded}
	ErrUnavailable     = &Error{Kind: KindUnavailable}
	ErrTooLarge        = &Error{Kind: KindTooLarge}
)

// Error is Cairn's one error type: an operation, a kind, the field it is
// about (for invalid input), a message for humans, and the cause.
type Error struct {
	Op      string // e.g. "session.request"
	Kind    Kind
	Field   string // the offending input field, for KindInvalid
	Message string
	Err     error
}

func (e *Error) Error() string {
	msg := e.Message
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	if e.Err != nil {
		if msg != "" {
			msg += ": "
		}
		msg += e.Err.Error()
	}
	if msg == "" {
		msg = e.Kind.String()
	}
	if e.Op != "" {
		return e.Op + ": " + msg
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinels by kind: errors.Is(err, ErrNotFound).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Op == "" && t.Field == "" && t.Message == "" && t.Err == nil && t.Kind == e.Kind
}

// KindOf returns the kind of the first *Error in err's chain, KindInternal
// when there is none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// Invalid builds a KindInvalid error about field.
func Invalid(op, field, format string, args ...any) *Error {
	return &Error{Op: op, Kind: KindInvalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Errorf builds an error of kind k.
func Errorf(op string, k Kind, format string, args ...any) *Error {
	return &Error{Op: op, Kind: k, Message: fmt.Sprintf(format, args...)}
}
