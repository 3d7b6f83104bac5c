package eventstore

import "context"

// Store is the port every event store backend implements.
type Store interface {
	// Append writes events to the end of stream if the stream satisfies
	// expected; all of them or none. It returns the revision and position of
	// the last event. Appending zero events checks expected and returns the
	// stream's current revision (position 0 when nothing was written).
	// Re-appending events whose ids are already stored, in the same order, in
	// that stream returns the original result without writing. Nothing of
	// the events' Data or Metadata is kept once Append (or AppendMany)
	// returns: callers may reuse their buffers.
	Append(ctx context.Context, stream string, expected ExpectedRevision, events ...EventData) (AppendResult, error)

	// AppendMany makes several appends, to distinct streams, as one: every
	// part is checked as Append checks it (its expected revision; a part
	// whose events are already stored, in the same order, in its stream is
	// an idempotent retry and gets its original result), and either every
	// part is written or none is. A refused part fails the call with the
	// error Append would return for it, which names the part's stream
	// (*WrongExpectedRevisionError, *DuplicateEventError). The results are
	// in the order of the parts. The events written appear in the global
	// log in the order of the parts, with no other event among them.
	// At most MaxStreamsPerAppend parts; zero parts do nothing.
	AppendMany(ctx context.Context, parts ...StreamAppend) ([]AppendResult, error)

	// ReadStream returns the events of one stream. A stream without events
	// returns a *StreamNotFoundError.
	ReadStream(ctx context.Context, stream string, opts ReadStreamOptions) ([]RecordedEvent, error)

	// ReadAll returns up to limit events with a position greater than after,
	// in position order. It never returns an event while an event with a
	// smaller position may still be committed. The events' Data and
	// Metadata may be shared with other readers (the backends keep the head
	// of the log in memory for the subscriptions that follow it): callers
	// must not modify them.
	ReadAll(ctx context.Context, after uint64, limit int) ([]RecordedEvent, error)

	// Subscribe delivers every event with a position greater than after,
	// exactly once and in order, then follows new events live until ctx is
	// cancelled or the subscription is closed.
	Subscribe(ctx context.Context, after uint64) (Subscription, error)

	// Close releases the store's resources. Open subscriptions end.
	Close() error
}

// StreamAppend is one part of an AppendMany: what one Append would take.
type StreamAppend struct {
	Stream   string
	Expected ExpectedRevision
	Events   []EventData
}

// AppendResult is what a successful Append returns.
type AppendResult struct {
	// Revision of the last event of the stream after the append.
	Revision int64 `json:"revision"`
	// Position of the last event appended (0 for an empty append).
	Position uint64 `json:"position"`
}

// Direction of a stream read.
type Direction uint8

const (
	// Forward reads from older to newer revisions.
	Forward Direction = iota
	// Backward reads from newer to older revisions.
	Backward
)

// ReadStreamOptions selects a slice of a stream.
type ReadStreamOptions struct {
	Direction Direction
	// From is the first revision returned. For Backward reads, a negative
	// From means "from the end".
	From int64
	// Limit is the maximum number of events returned; <= 0 means all.
	Limit int
}

// FromEnd is a ReadStreamOptions.From value for backward reads.
const FromEnd int64 = -1
