package eventstore

import "strconv"

type expectedKind uint8

const (
	expectAny expectedKind = iota
	expectNoStream
	expectStreamExists
	expectExact
)

// ExpectedRevision is the optimistic-concurrency condition of an Append.
type ExpectedRevision struct {
	kind expectedKind
	rev  int64
}

var (
	// Any appends whatever the stream's state.
	Any = ExpectedRevision{kind: expectAny}
	// NoStream appends only if the stream has no events yet.
	NoStream = ExpectedRevision{kind: expectNoStream}
	// StreamExists appends only if the stream has at least one event.
	StreamExists = ExpectedRevision{kind: expectStreamExists}
)

// Exact appends only if the stream's last event has revision rev. Exact(-1)
// is NoStream, so an aggregate loaded from an empty stream (revision -1)
// can pass its revision as is.
func Exact(rev int64) ExpectedRevision {
	if rev < 0 {
		return NoStream
	}
	return ExpectedRevision{kind: expectExact, rev: rev}
}

// Check reports whether a stream whose last revision is actual (-1 when the
// stream does not exist) satisfies the expectation.
func (e ExpectedRevision) Check(actual int64) bool {
	switch e.kind {
	case expectNoStream:
		return actual < 0
	case expectStreamExists:
		return actual >= 0
	case expectExact:
		return actual == e.rev
	default:
		return true
	}
}

// IsAny reports whether e accepts any stream state.
func (e ExpectedRevision) IsAny() bool { return e.kind == expectAny }

// Revision returns the exact revision expected and true, or false when e is
// not an exact revision.
func (e ExpectedRevision) Revision() (int64, bool) { return e.rev, e.kind == expectExact }

// Code returns a compact form for backends that check the expectation inside
// the database: -1 any, -2 no stream, -3 stream exists, >= 0 exact revision.
func (e ExpectedRevision) Code() int64 {
	switch e.kind {
	case expectNoStream:
		return -2
	case expectStreamExists:
		return -3
	case expectExact:
		return e.rev
	default:
		return -1
	}
}

// String is a human-readable form, used in error messages.
func (e ExpectedRevision) String() string {
	switch e.kind {
	case expectNoStream:
		return "no-stream"
	case expectStreamExists:
		return "stream-exists"
	case expectExact:
		return strconv.FormatInt(e.rev, 10)
	default:
		return "any"
	}
}
