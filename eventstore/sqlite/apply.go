package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/eventstore"
)

// batchTx is the state of one open batch transaction. Every query runs on
// the write connection inside the transaction, so it sees the committed
// state plus what the earlier appends of the batch wrote: each append is
// checked against exactly the state it will commit on.
type batchTx struct {
	conn *writeConn
	// next is the position the next inserted event gets.
	next       int64
	recordedAt int64
	// keep tells to collect recorded: the events inserted, as ReadAll
	// would return them (for the store's tail).
	keep     bool
	recorded []eventstore.RecordedEvent
}

// applyRequest checks and writes one request: its parts all or none (a
// request of several parts runs in a savepoint, undone when a part is
// refused). It returns a result per part, or refused (the first refused
// part's error; nothing was written), or err when the whole transaction
// must be abandoned.
func (tx *batchTx) applyRequest(ctx context.Context, req *appendRequest) (results []eventstore.AppendResult, refused, err error) {
	if len(req.parts) == 1 {
		result, refused, err := tx.apply(ctx, &req.parts[0])
		if err != nil || refused != nil {
			return nil, refused, err
		}
		return []eventstore.AppendResult{result}, nil, nil
	}
	c := tx.conn
	if _, err := c.savepointMany.ExecContext(ctx); err != nil {
		return nil, nil, translate("savepoint", err)
	}
	results, ok, err := tx.applyMany(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		if _, err := c.releaseMany.ExecContext(ctx); err != nil {
			return nil, nil, translate("release savepoint", err)
		}
		return results, nil, nil
	}
	start, kept := tx.next, len(tx.recorded)
	results = make([]eventstore.AppendResult, len(req.parts))
	for i := range req.parts {
		results[i], refused, err = tx.apply(ctx, &req.parts[i])
		if err != nil {
			return nil, nil, err
		}
		if refused != nil {
			if _, err := c.rollbackToMany.ExecContext(ctx); err != nil {
				return nil, nil, translate("rollback to savepoint", err)
			}
			if _, err := c.releaseMany.ExecContext(ctx); err != nil {
				return nil, nil, translate("release savepoint", err)
			}
			tx.next, tx.recorded = start, tx.recorded[:kept]
			return nil, refused, nil
		}
	}
	if _, err := c.releaseMany.ExecContext(ctx); err != nil {
		return nil, nil, translate("release savepoint", err)
	}
	return results, nil, nil
}

// apply checks and writes one stream's append. It returns the append's
// result, or refused (the append's own error; it wrote nothing), or err
// when the whole transaction must be abandoned.
//
// The retry of an append already stored is answered with the original
// result whatever the expected revision says (see retried). Its ids are
// not looked up before every append: a retry either fails the expected
// revision (the stream has moved past it: looked up then) or collides on
// its first event's id when inserted (looked up then).
func (tx *batchTx) apply(ctx context.Context, req *appendPart) (result eventstore.AppendResult, refused, err error) {
	current, err := tx.lastRevision(ctx, req.stream)
	if err != nil {
		return result, nil, err
	}
	if !req.expected.Check(current) {
		if len(req.events) > 0 {
			result, found, refused, err := tx.retried(ctx, req)
			if err != nil || refused != nil || found {
				return result, refused, err
			}
		}
		return result, &eventstore.WrongExpectedRevisionError{Stream: req.stream, Expected: req.expected, Actual: current}, nil
	}
	if len(req.events) == 0 {
		return eventstore.AppendResult{Revision: current}, nil, nil
	}
	return tx.insert(ctx, req, current)
}

// retried recognises the retry of an append already stored: the first
// event's id is stored in this stream and all the events' ids follow it at
// consecutive revisions, in order. Then found is true and result is the
// original one, whatever the expected revision says. An id stored elsewhere,
// or a retry that only partly matches, is refused.
func (tx *batchTx) retried(ctx context.Context, req *appendPart) (result eventstore.AppendResult, found bool, refused, err error) {
	first := req.events[0].ID
	stored, ok, err := tx.findID(ctx, first)
	if err != nil || !ok {
		return result, false, nil, err
	}
	if stored.stream != req.stream {
		return result, false, duplicate(req.stream, first, stored), nil
	}
	n := int64(len(req.events))
	if n == 1 {
		return eventstore.AppendResult{Revision: stored.revision, Position: uint64(stored.position)}, true, nil, nil
	}
	rows, err := tx.conn.storedRange.QueryContext(ctx, req.stream, stored.revision, stored.revision+n)
	if err != nil {
		return result, false, nil, translate("read stored events", err)
	}
	var (
		id       []byte
		position int64
		matched  int
	)
	for rows.Next() {
		if err := rows.Scan(&id, &position); err != nil {
			return result, false, nil, errors.Join(translate("read stored events", err), rows.Close())
		}
		if !bytes.Equal(id, req.events[matched].ID[:]) {
			break
		}
		matched++
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return result, false, nil, translate("read stored events", err)
	}
	if matched < len(req.events) {
		return result, false, &eventstore.DuplicateEventError{
			ID:     req.events[matched].ID,
			Stream: req.stream,
			Reason: fmt.Sprintf("the append only partly matches the events stored from revision %d (a retry must resend the same events in the same order)", stored.revision),
		}, nil
	}
	return eventstore.AppendResult{Revision: stored.revision + n - 1, Position: uint64(position)}, true, nil, nil
}

// insert writes the events of req after revision current. A multi-event
// append runs in a savepoint so that an id found stored half-way is undone
// alone; a single INSERT is atomic by itself.
func (tx *batchTx) insert(ctx context.Context, req *appendPart, current int64) (result eventstore.AppendResult, refused, err error) {
	c := tx.conn
	multi := len(req.events) > 1
	if multi {
		if _, err := c.savepoint.ExecContext(ctx); err != nil {
			return result, nil, translate("savepoint", err)
		}
	}
	start, kept := tx.next, len(tx.recorded)
	for i := range req.events {
		ev := &req.events[i]
		_, err := c.insert.ExecContext(ctx, tx.next, ev.ID[:], req.stream, current+1+int64(i),
			ev.Type, ev.Version, ev.Data, metadataColumn(ev.MetadataJSON), tx.recordedAt)
		if err == nil {
			if tx.keep {
				tx.recorded = append(tx.recorded, eventstore.RecordedEvent{ID: ev.ID, Stream: req.stream, Type: ev.Type, Version: ev.Version,
					Revision: current + 1 + int64(i), Position: uint64(tx.next), RecordedAt: time.UnixMicro(tx.recordedAt).UTC(),
					Data: ev.Data, Metadata: req.metadata[i]})
			}
			tx.next++
			continue
		}
		if !isUniqueViolation(err) {
			return result, nil, translate("insert event", err)
		}
		// The revision and the position were read inside this
		// transaction, so the id is the only column that can collide.
		// Confirm it rather than trust the message.
		if i == 0 {
			// Nothing of this append is written yet: it may be the retry
			// of one stored (or collide with another stream's event).
			if multi {
				if err := tx.undo(ctx); err != nil {
					return result, nil, err
				}
			}
			result, found, refused, findErr := tx.retried(ctx, req)
			if findErr != nil || refused != nil || found {
				return result, refused, findErr
			}
			return result, nil, translate("insert event", err)
		}
		stored, ok, findErr := tx.findID(ctx, ev.ID)
		if findErr != nil {
			return result, nil, findErr
		}
		if !ok {
			return result, nil, translate("insert event", err)
		}
		if multi {
			if err := tx.undo(ctx); err != nil {
				return result, nil, err
			}
		}
		tx.next, tx.recorded = start, tx.recorded[:kept]
		return result, duplicate(req.stream, ev.ID, stored), nil
	}
	if multi {
		if _, err := c.release.ExecContext(ctx); err != nil {
			return result, nil, translate("release savepoint", err)
		}
	}
	return eventstore.AppendResult{Revision: current + int64(len(req.events)), Position: uint64(tx.next - 1)}, nil, nil
}

// undo rolls the current append back to its savepoint and ends it.
func (tx *batchTx) undo(ctx context.Context) error {
	if _, err := tx.conn.rollbackTo.ExecContext(ctx); err != nil {
		return translate("rollback to savepoint", err)
	}
	if _, err := tx.conn.release.ExecContext(ctx); err != nil {
		return translate("release savepoint", err)
	}
	return nil
}

// lastRevision returns the stream's last revision, -1 when it has none.
func (tx *batchTx) lastRevision(ctx context.Context, stream string) (int64, error) {
	var rev sql.NullInt64
	if err := tx.conn.lastRevision.QueryRowContext(ctx, stream).Scan(&rev); err != nil {
		return 0, translate("read stream revision", err)
	}
	if !rev.Valid {
		return -1, nil
	}
	return rev.Int64, nil
}

// storedEvent is where an event id is stored.
type storedEvent struct {
	stream   string
	revision int64
	position int64
}

func (tx *batchTx) findID(ctx context.Context, id uuid.UUID) (storedEvent, bool, error) {
	var st storedEvent
	err := tx.conn.findID.QueryRowContext(ctx, id[:]).Scan(&st.stream, &st.revision, &st.position)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return st, false, nil
	case err != nil:
		return st, false, translate("look up event id", err)
	}
	return st, true, nil
}

// duplicate is the refusal of an append to stream whose event id is already
// stored at st (in another stream, or in this one but not as the retry of
// this append). The other stream is not named: it may belong to someone
// else.
func duplicate(stream string, id uuid.UUID, st storedEvent) error {
	reason := "already stored in another stream"
	if st.stream == stream {
		reason = fmt.Sprintf("already stored in this stream at revision %d, and the append is not a retry of the events stored there", st.revision)
	}
	return &eventstore.DuplicateEventError{ID: id, Stream: stream, Reason: reason}
}

var emptyMetadata = []byte("{}")

// metadataColumn stores metadata without any field set as NULL.
func metadataColumn(md []byte) any {
	if len(md) == 0 || bytes.Equal(md, emptyMetadata) {
		return nil
	}
	return md
}
