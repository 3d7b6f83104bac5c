package commands

import (
	"context"
	"fmt"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// streamWrite is one stream's part of a batch write: the events decided on
// it, appended expecting the revision they were decided on.
type streamWrite struct {
	stream   domain.Stream
	revision int64
	events   []domain.Event
}

// appendBatch writes parts in one eventstore AppendMany: all of them or
// none (at most eventstore.MaxStreamsPerAppend). A refusal is a
// *domain.Error wrapping the store's error, which names the refused
// stream (eventstore.WrongExpectedRevisionError): the caller re-decides
// that stream and tries again. A failure that may have written the parts
// is marked as appendUncertain. The request's access record, if not yet
// taken, rides with the first part.
func appendBatch(ctx context.Context, store EventStore, md Metadata, parts []streamWrite) ([]eventstore.AppendResult, error) {
	const op = "commands.append-batch"
	if len(parts) == 0 {
		return nil, nil
	}
	appends := make([]eventstore.StreamAppend, len(parts))
	for i, p := range parts {
		data, err := encode(p.events, md)
		if err != nil {
			return nil, err
		}
		appends[i] = eventstore.StreamAppend{Stream: p.stream.String(), Expected: eventstore.Exact(p.revision), Events: data}
	}
	first, release, err := withAccessRecord(parts[0].stream, md, appends[0].Events)
	if err != nil {
		return nil, err
	}
	appends[0].Events = first
	res, err := store.AppendMany(ctx, appends...)
	if err != nil {
		release()
		if !definitelyNotWritten(err) {
			err = &uncertainAppendError{stream: fmt.Sprintf("%d streams from %s", len(parts), parts[0].stream), err: err}
		}
		return nil, storeError(op, err)
	}
	return res, nil
}
