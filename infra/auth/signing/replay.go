package signing

import (
	"container/heap"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultReplayCacheSize bounds a ReplayCache when NewReplayCache is given
// 0: 131072 signatures, about 16 MiB (~125 bytes each), which hold a full
// 15-minute window at 145 strict requests/s; above that rate the window
// shrinks (see ReplayCache).
const DefaultReplayCacheSize = 1 << 17

// ReplayCache remembers the strict-mode signatures accepted within the
// skew window, so that each is accepted at most once. It holds at most
// size signatures, ordered by their request date, and a floor: every
// signature it ever accepted is either held or dated at or before the
// floor, and a request dated at or before the floor is refused
// (ReasonReplayWindow) — so it never accepts a replay, whatever its load
// or the clock does.
//
// A signature is forgotten once its date leaves the window (the skew
// check refuses it from then on), the floor rising to its date. When the
// cache is full, the oldest signature is evicted and the floor rises to
// its date: the accepted window shrinks to what the cache can hold
// (size / rate of strict requests) instead of refusing everyone; only a
// request that arrives later than that after it was signed is refused,
// and signing it anew gets it through. Safe for concurrent use.
type ReplayCache struct {
	mu    sync.Mutex
	size  int
	held  map[[sha256.Size]byte]struct{}
	dates replayHeap
	floor int64 // unix nanoseconds; math.MinInt64 at first
}

// NewReplayCache returns an empty cache holding at most size signatures
// (DefaultReplayCacheSize when 0).
func NewReplayCache(size int) (*ReplayCache, error) {
	if size < 0 {
		return nil, errors.New("signing: replay cache size must not be negative")
	}
	if size == 0 {
		size = DefaultReplayCacheSize
	}
	return &ReplayCache{size: size, held: make(map[[sha256.Size]byte]struct{}), floor: minInt64}, nil
}

const minInt64 = -1 << 63

type replayEntry struct {
	at  int64 // the request's date, unix nanoseconds
	sig [sha256.Size]byte
}

// replayHeap is a min-heap of entries by date (container/heap).
type replayHeap []replayEntry

func (h replayHeap) Len() int           { return len(h) }
func (h replayHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h replayHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *replayHeap) Push(x any)        { *h = append(*h, x.(replayEntry)) }
func (h *replayHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// Accept records sig, the signature of a request dated date, and reports
// whether it may be served: a signature already held is refused
// (ReasonReplayed), as is a date at or before the floor
// (ReasonReplayWindow). Signatures dated at or before oldest (now minus
// the skew window) are forgotten first. Only verified signatures should
// be offered, so that only key holders can fill the cache.
func (c *ReplayCache) Accept(sig [sha256.Size]byte, date, oldest time.Time) error {
	at, cut := date.UnixNano(), oldest.UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.dates) > 0 && c.dates[0].at <= cut {
		c.forgetOldest()
	}
	if at <= c.floor {
		return refuse(ReasonReplayWindow, fmt.Sprintf("the server remembers strict signatures only for requests dated after %s (its replay cache is full); sign the request anew",
			time.Unix(0, c.floor).UTC().Format(time.RFC3339Nano)))
	}
	if _, ok := c.held[sig]; ok {
		return refuse(ReasonReplayed, "this signature was already accepted; sign every request anew")
	}
	if len(c.dates) >= c.size {
		if at <= c.dates[0].at {
			// Older than everything held: accepted without being held, the
			// floor covering it, rather than evicting a newer signature.
			c.floor = at
			return nil
		}
		c.forgetOldest()
	}
	heap.Push(&c.dates, replayEntry{at: at, sig: sig})
	c.held[sig] = struct{}{}
	return nil
}

// forgetOldest drops the oldest signature, raising the floor to its date.
func (c *ReplayCache) forgetOldest() {
	e := heap.Pop(&c.dates).(replayEntry)
	delete(c.held, e.sig)
	c.floor = max(c.floor, e.at)
}

// Len is how many signatures the cache holds.
func (c *ReplayCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.dates)
}

// Floor is the date at or before which every request is refused (the
// zero time when there is none yet).
func (c *ReplayCache) Floor() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.floor == minInt64 {
		return time.Time{}
	}
	return time.Unix(0, c.floor)
}
