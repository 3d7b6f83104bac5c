package httpauth

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/projections/tenancy"
)

// DefaultCacheSize bounds the cache (entries; it is emptied when full).
const DefaultCacheSize = 4096

// Freshness tells the cache whether the read model changed since an
// answer was read: Committed is the tenancy projector's position (every
// event up to it is committed), Changed the position of the last tenancy
// event applied, committed or not (tenancy.ReadModel.LastApplied). An
// answer read when Committed() was p stays true while Changed() <= p.
type Freshness struct {
	Committed func() uint64
	Changed   func() uint64
}

// cachingDirectory keeps the answers of a Directory until the tenancy read
// model changes: any tenancy event (a key deactivated, a secret rotated,
// a token revoked, a membership changed) empties it for the lookups made
// before it was committed. Misses and errors are not kept; token expiry
// is checked on every request by the caller.
type cachingDirectory struct {
	dir   Directory
	fresh Freshness
	size  int
	mu    sync.Mutex
	m     map[string]cached
}

type cached struct {
	at       uint64
	creds    tenancy.Credentials
	grant    tenancy.TokenGrant
	projects []tenancy.Member
}

func newCachingDirectory(dir Directory, fresh Freshness, size int) *cachingDirectory {
	if size <= 0 {
		size = DefaultCacheSize
	}
	return &cachingDirectory{dir: dir, fresh: fresh, size: size, m: make(map[string]cached, size)}
}

// get returns a still-true entry.
func (c *cachingDirectory) get(key string) (cached, bool) {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if !ok || e.at > c.fresh.Committed() || c.fresh.Changed() > e.at {
		return cached{}, false
	}
	return e, true
}

func (c *cachingDirectory) put(key string, e cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.size {
		clear(c.m)
	}
	c.m[key] = e
}

func (c *cachingDirectory) Credentials(ctx context.Context, accessKey string) (tenancy.Credentials, error) {
	key := "k:" + accessKey
	if e, ok := c.get(key); ok {
		return e.creds, nil
	}
	at := c.fresh.Committed()
	cr, err := c.dir.Credentials(ctx, accessKey)
	if err == nil {
		c.put(key, cached{at: at, creds: cr})
	}
	return cr, err
}

func (c *cachingDirectory) TokenByDigest(ctx context.Context, digest string) (tenancy.TokenGrant, error) {
	key := "t:" + digest
	if e, ok := c.get(key); ok {
		return e.grant, nil
	}
	at := c.fresh.Committed()
	g, err := c.dir.TokenByDigest(ctx, digest)
	if err == nil {
		c.put(key, cached{at: at, grant: g})
	}
	return g, err
}

func (c *cachingDirectory) ProjectsOf(ctx context.Context, user uuid.UUID) ([]tenancy.Member, error) {
	key := "p:" + user.String()
	if e, ok := c.get(key); ok {
		return e.projects, nil
	}
	at := c.fresh.Committed()
	ms, err := c.dir.ProjectsOf(ctx, user)
	if err == nil {
		c.put(key, cached{at: at, projects: ms})
	}
	return ms, err
}
