package eventstore

import (
	"context"
	"errors"
	"fmt"
)

// Tombstone is what Prune leaves of every event it prunes, in place of its
// type and data: a type of the caller's (e.g. "audit.pruned") and a JSON
// payload saying what was removed and where it went.
type Tombstone struct {
	Type string
	Data []byte
}

// Pruner is a Store that can drop the payloads of a stream's oldest events
// (both backends are). Prune replaces the type, data and metadata of every
// event of stream with a revision below before by the tombstone's type and
// data (schema version 1, no metadata), in one transaction, and returns
// how many events it changed (a retry changes none).
//
// It removes the content, never the event: ids, revisions, positions and
// times stay, so no revision or position is ever reused, reordered or left
// out, revisions stay dense, and readers and subscriptions go on as they
// were (a subscriber past the pruned events never sees them again; one
// behind them, or a rebuild, sees the tombstones). The stream's last event
// is never pruned (before above the last revision is *PruneError), so a
// writer appending with an expected revision is unaffected. A process's
// in-memory copy of the latest events is dropped when it prunes; another
// process that reads the stream by position may still serve a pruned
// event's old payload from its own copy until that moves on.
type Pruner interface {
	Prune(ctx context.Context, stream string, before int64, tomb Tombstone) (int64, error)
}

// ErrPrune: a prune was refused before anything was changed. Typed as
// *PruneError.
var ErrPrune = errors.New("eventstore: prune refused")

// PruneError says why a prune was refused.
type PruneError struct {
	Stream string
	Reason string
}

func (e *PruneError) Error() string {
	return fmt.Sprintf("eventstore: prune of stream %q refused: %s", e.Stream, e.Reason)
}

// Is makes errors.Is(err, ErrPrune) true.
func (e *PruneError) Is(target error) bool { return target == ErrPrune }

// CheckPrune validates a prune's arguments (every backend calls it first).
func CheckPrune(stream string, before int64, tomb Tombstone) error {
	switch {
	case stream == "":
		return &PruneError{Stream: stream, Reason: "no stream named"}
	case before < 0:
		return &PruneError{Stream: stream, Reason: fmt.Sprintf("revision %d is negative", before)}
	case tomb.Type == "":
		return &PruneError{Stream: stream, Reason: "the tombstone has no type"}
	case !validJSON(tomb.Data):
		return &PruneError{Stream: stream, Reason: "the tombstone's data is not JSON"}
	}
	return nil
}

// CheckPruneHead refuses a prune that would reach the stream's last event
// (head is its revision, -1 when the stream has none).
func CheckPruneHead(stream string, before, head int64) error {
	if head < 0 {
		return &StreamNotFoundError{Stream: stream}
	}
	if before > head {
		return &PruneError{Stream: stream, Reason: fmt.Sprintf("revision %d is past the stream's last event (%d), which is never pruned", before, head)}
	}
	return nil
}
