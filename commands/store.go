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
// event the command appends (as eventstore.Metadata). Access, when set,
// is the request's access record, which the command's first append stores
// with its events (see Access); it is not part of the events' metadata.
type Metadata struct {
	// Actor is the user (id or email) on whose authority the command runs.
	Actor string
	// AccessKey is the keypair the request was signed with, if any.
	AccessKey string
	// ActingAs is the user an admin acted on behalf of, if any.
	ActingAs string
	// RequestID correlates every event caused by one request.
	RequestID string
	// CausationID is the id of the event or message that caused the command.
	CausationID string
	// ClientIP is the address the request came from.
	ClientIP string
	// Access is the request's access record (see Access), or nil.
	Access *Access

	// audit is Access once the Audited decorator handed it to the
	// command's appends.
	audit *Access
}

// Stored is what the command's events record of md.
func (md Metadata) Stored() eventstore.Metadata {
	return eventstore.Metadata{Actor: md.Actor, AccessKey: md.AccessKey, ActingAs: md.ActingAs,
		RequestID: md.RequestID, CausationID: md.CausationID, ClientIP: md.ClientIP}
}
