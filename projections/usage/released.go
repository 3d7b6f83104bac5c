package usage

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairnhq/cairn/projections"
)

// releaseRows bounds the kernels one lookup of allocation times reads.
const releaseRows = 500

// held are the releases of the open batch not yet written (see
// projections.Flusher). A release needs its kernel's allocation time to
// be cut into days; reading it per release would cost a round trip per
// event (on PostgreSQL it also breaks the batch's pipeline), so the batch's
// releases are looked up together when it ends.
type held struct {
	mu  sync.Mutex
	tx  projections.Tx
	ids []string
	at  map[string]time.Time
}

// hold keeps a release for tx, dropping what an earlier transaction left
// (a batch that failed and is applied again). A kernel released twice
// keeps its first release.
func (h *held) hold(tx projections.Tx, kernel string, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tx != tx {
		h.reset(tx)
	}
	if _, ok := h.at[kernel]; ok {
		return
	}
	h.ids = append(h.ids, kernel)
	h.at[kernel] = at
}

func (h *held) reset(tx projections.Tx) {
	h.tx, h.ids = tx, h.ids[:0]
	if h.at == nil {
		h.at = map[string]time.Time{}
	}
	clear(h.at)
}

// Flush implements projections.Flusher: it reads the allocation times of
// the batch's released kernels that are still open (releasedRows at a
// time), queues their day rows and closes them.
func (m *ReadModel) Flush(ctx context.Context, tx projections.Tx) error {
	h := &m.held
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tx != tx {
		h.reset(tx)
		return nil
	}
	defer h.reset(nil)
	for lo := 0; lo < len(h.ids); lo += releaseRows {
		ids := h.ids[lo:min(len(h.ids), lo+releaseRows)]
		args := make([]any, len(ids))
		marks := make([]string, len(ids))
		for i, id := range ids {
			args[i], marks[i] = id, "$"+strconv.Itoa(i+1)
		}
		rows, err := tx.Query(ctx, fmt.Sprintf(m.sql.allocatedFmt, strings.Join(marks, ", ")), args...)
		if err != nil {
			return fmt.Errorf("usage: allocation times: %w", err)
		}
		type open struct {
			kernel    string
			allocated int64
		}
		var found []open
		for rows.Next() {
			var o open
			if err := rows.Scan(&o.kernel, &o.allocated); err != nil {
				rows.Close()
				return fmt.Errorf("usage: allocation times: %w", err)
			}
			found = append(found, o)
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return fmt.Errorf("usage: allocation times: %w", err)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("usage: allocation times: %w", err)
		}
		for _, o := range found {
			released := h.at[o.kernel]
			for _, p := range splitDays(time.UnixMilli(o.allocated), released) {
				tx.Queue(m.sql.day, o.kernel, p.day, p.millis)
			}
			tx.Queue(m.sql.release, o.kernel, released.UnixMilli())
		}
	}
	return nil
}
