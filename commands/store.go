package commands

import (
	"context"

	"github.com/cairnhq/cairn/eventstore"
)

// EventStore is the part of the event store the write side uses. Every
// eventstore.Store satisfies it.
type EventStore interface {
	Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) (eventstore.AppendResult, error)
	AppendMany(ctx context.Context, parts ...eventstore.StreamAppend) ([]eventstore.AppendResult, error)
	ReadStream(ctx context.Context, stream string, opts eventstore.ReadStreamOptions) ([]eventstore.RecordedEvent, error)
}

var _ EventStore = eventstore.Store(nil)

// Metadata says who caused a command and why; it is stored with every
// event the command appends.
type Metadata = eventstore.Metadata
