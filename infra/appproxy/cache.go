package appproxy

import (
	"context"
	"sync"

	"github.com/google/uuid"
)

// Versioned tells when the read models behind a Routes may have changed;
// *projections.DB satisfies it (see its Version): v changes when a write
// begins and when it ends, and settled is false while one is under way.
type Versioned interface {
	Version() (v uint64, settled bool)
}

// maxCachedRoutes bounds CachedRoutes' memory: past it, the cache starts
// over.
const maxCachedRoutes = 4096

// CachedRoutes answers from memory the routes it read from Routes while
// the read models have not changed since, so a busy app costs no query per
// request while a route still dies with its session: the write that ends
// the session changes Source's version when it begins, so the next
// request reads the read models again and finds the session ended once
// that write committed. A route read while a write is under way is not
// kept. Only routes are kept, never a refusal: an unknown session is
// looked up every time.
//
// Source must see every write to the read models Routes reads: use it in
// the process that projects them (`cairn dev`), not beside a read model
// another process writes.
type CachedRoutes struct {
	routes Routes
	source Versioned

	mu      sync.Mutex
	version uint64
	known   map[routeKey]Route
}

type routeKey struct {
	session uuid.UUID
	app     string
}

// NewCachedRoutes caches what routes answers for as long as source's
// version stays the same.
func NewCachedRoutes(routes Routes, source Versioned) *CachedRoutes {
	return &CachedRoutes{routes: routes, source: source, known: map[routeKey]Route{}}
}

// Route implements Routes.
func (c *CachedRoutes) Route(ctx context.Context, session uuid.UUID, app string) (Route, error) {
	k := routeKey{session, app}
	v, settled := c.source.Version()
	if settled {
		c.mu.Lock()
		if v > c.version { // versions only grow
			clear(c.known)
			c.version = v
		}
		r, ok := c.known[k]
		ok = ok && c.version == v
		c.mu.Unlock()
		if ok {
			return r, nil
		}
	}
	r, err := c.routes.Route(ctx, session, app)
	if err != nil || !settled {
		return r, err
	}
	c.mu.Lock()
	// Kept under the version read before the query: a write begun since
	// has moved the version on, and the entry is never served.
	if c.version == v {
		if len(c.known) >= maxCachedRoutes {
			clear(c.known)
		}
		c.known[k] = r
	}
	c.mu.Unlock()
	return r, nil
}
