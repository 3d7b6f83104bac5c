package commands

import (
	"context"
	"slices"
	"sync"

	"github.com/cairnhq/cairn/commands/internal/parallel"
	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// UpdatePendingSessions is a scheduling round's UpdatePendingSession
// commands, written together: those with a KnownRevision many per
// eventstore AppendMany, the others (and those whose session moved) one
// by one.
type UpdatePendingSessions struct {
	Updates []UpdatePendingSession
}

func (UpdatePendingSessions) CommandName() string { return "session.update-pending-batch" }

// UpdatePendingSessionsResult tells what became of the updates.
type UpdatePendingSessionsResult struct {
	// Position is the last position written.
	Position uint64
	// Failed are the sessions whose update was not recorded, with why.
	Failed map[uuid.UUID]error
}

type updatePendingSessionsHandler struct {
	sessions repository[*domain.Session]
	clock
}

// newUpdatePendingSessionsHandler builds the handler over what it uses.
func newUpdatePendingSessionsHandler(sessions repository[*domain.Session], now clock) updatePendingSessionsHandler {
	return updatePendingSessionsHandler{sessions: sessions, clock: now}
}

// Handle appends the known sessions' session.pending-updated in chunks
// (each event expecting its session's known revision); a session whose
// stream moved leaves its chunk and goes, like the updates without a
// known revision, through UpdatePendingSession's handler, which decides
// on the stream.
func (h updatePendingSessionsHandler) Handle(ctx context.Context, md Metadata, cmd UpdatePendingSessions) (UpdatePendingSessionsResult, error) {
	at := h.now()
	res := UpdatePendingSessionsResult{Failed: map[uuid.UUID]error{}}
	var mu sync.Mutex
	done := func(c UpdatePendingSession, pos uint64, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			res.Failed[c.SessionID] = err
			return
		}
		res.Position = max(res.Position, pos)
	}
	var known []UpdatePendingSession
	var rest []UpdatePendingSession
	for _, c := range cmd.Updates {
		if c.KnownRevision != nil && c.Reason != "" && c.Tries >= 0 {
			known = append(known, c)
		} else {
			rest = append(rest, c)
		}
	}
	single := updatePendingSessionHandler(h)
	knownChunks := chunks(known)
	parallel.Each(ctx, batchChunks, len(knownChunks), func(i int) {
		pending := slices.Clone(knownChunks[i])
		for len(pending) > 0 {
			parts := make([]streamWrite, len(pending))
			for j, c := range pending {
				parts[j] = streamWrite{stream: domain.SessionStream(c.SessionID), revision: *c.KnownRevision, events: []domain.Event{
					domain.SessionPendingUpdated{Reason: c.Reason, Details: slices.Clone(c.Details), Tries: c.Tries, At: at},
				}}
			}
			written, err := appendBatch(ctx, h.sessions.store, md, parts)
			if err == nil {
				for j, c := range pending {
					done(c, written[j].Position, nil)
				}
				return
			}
			j := conflicted(err, parts)
			if j < 0 {
				for _, c := range pending {
					done(c, 0, err)
				}
				return
			}
			c := pending[j]
			pending = slices.Delete(pending, j, j+1)
			c.KnownRevision = nil // decide on the stream
			out, err := single.Handle(ctx, md, c)
			done(c, out.Position, err)
		}
	})
	parallel.Each(ctx, batchWriters, len(rest), func(i int) {
		out, err := single.Handle(ctx, md, rest[i])
		done(rest[i], out.Position, err)
	})
	return res, nil
}
