package projections

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// Projection is one read model: the tables it owns and how each event
// changes them.
type Projection interface {
	// Name identifies the projection's checkpoint. It never changes once
	// shipped (renaming it means rebuilding under the new name).
	Name() string

	// EventTypes lists the wire names of the events Apply handles. The
	// projector skips every other type without decoding it.
	EventTypes() []string

	// Tables lists the tables the migrations create, in creation order.
	// Rebuild drops them in reverse order.
	Tables() []string

	// Migrations returns the statements that create and evolve the tables
	// for a dialect, in order. They are append-only: the projector records
	// how many ran (projection_checkpoints.schema_version) and runs the
	// new ones at start. Table names are written "{schema}.name" (see
	// DB.SQL).
	Migrations(d Dialect) []string

	// Apply folds one event into the tables, inside the batch's
	// transaction. It must be deterministic (time and ids from the event
	// only) and should be idempotent where that is cheap (upserts, updates
	// guarded by the last position applied to a row), although the
	// projector never applies an event twice once its batch committed.
	Apply(ctx context.Context, tx Tx, ev Event) error
}

// Flusher is what a Projection implements when it holds writes back
// across the events of a batch, to write many rows per statement: the
// projector calls Flush after the batch's last Apply, in the same
// transaction, before it writes the checkpoint. A projection that holds
// writes back must keep them per transaction (a batch that failed is
// applied again in a new one) and write them before any later write of
// its own that they must precede.
type Flusher interface {
	Flush(ctx context.Context, tx Tx) error
}

// Event is what Apply receives: the stored envelope (position, stream,
// type, recorded time, metadata) and the decoded payload.
type Event struct {
	eventstore.RecordedEvent
	// Payload is the domain event, decoded with domain.DecodeEvent.
	Payload domain.Event
}

// Subscriber is what a projector needs from the event store: every
// eventstore.Store satisfies it.
type Subscriber interface {
	Subscribe(ctx context.Context, after uint64) (eventstore.Subscription, error)
}

var _ Subscriber = eventstore.Store(nil)
