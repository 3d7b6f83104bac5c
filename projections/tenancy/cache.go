package tenancy

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/cairnhq/cairn/projections"
)

// DefaultCacheSize bounds the answers CacheAnswers keeps (entries; the
// cache is emptied when full).
const DefaultCacheSize = 4096

// CacheAnswers makes the read model keep the answers of its single-object
// queries (a domain, project, user, keypair, policy, resource group, image)
// and of the per-request lists (a user's projects, the resource groups a
// session may use) until the read model changes. Every session request
// reads a dozen of them, and they change rarely; the sessions' own events
// do not touch them.
//
// committed is the tenancy projector's position (every event up to it is
// committed) and replaced the position at which a rebuild last swapped the
// read model's tables (0 if never): an answer read when committed was p is
// kept while neither the last tenancy event applied (LastApplied, committed
// or not) nor replaced is above p, and while the projector is not behind p
// (a reset). Only a process whose projector writes this read model may
// call it: another process's writes are not seen (the same rule as
// projections.DB.Version). Answers are shared between callers: they must
// not be modified.
func (m *ReadModel) CacheAnswers(committed, replaced func() uint64, size int) {
	if size <= 0 {
		size = DefaultCacheSize
	}
	m.cache.Store(&answerCache{committed: committed, replaced: replaced, size: size, m: make(map[string]cachedAnswer, size)})
}

// answerCache is what CacheAnswers keeps: answers by query and arguments.
type answerCache struct {
	committed, replaced func() uint64
	size                int
	mu                  sync.Mutex
	m                   map[string]cachedAnswer
}

type cachedAnswer struct {
	at uint64 // the projector's committed position before the query ran
	v  any
}

// key names a query with its arguments (strings, numbers and ids; a NUL
// cannot occur in any of them).
func (c *answerCache) key(query string, args []any) string {
	var b strings.Builder
	b.WriteString(query)
	for _, a := range args {
		b.WriteByte(0)
		if s, ok := a.(string); ok {
			b.WriteString(s)
		} else {
			fmt.Fprint(&b, a)
		}
	}
	return b.String()
}

// get returns an answer that is still true.
func (c *answerCache) get(key string, lastApplied uint64) (any, bool) {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if !ok || lastApplied > e.at || c.replaced() > e.at || c.committed() < e.at {
		return nil, false
	}
	return e.v, true
}

func (c *answerCache) put(key string, at uint64, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.size {
		clear(c.m)
	}
	c.m[key] = cachedAnswer{at: at, v: v}
}

// cached answers query from the cache when CacheAnswers was called and the
// answer is still true, or runs it (run) and keeps a successful answer.
// Errors (not found included) are not kept.
func cached[T any](m *ReadModel, query string, args []any, run func() (T, error)) (T, error) {
	c := m.cache.Load()
	if c == nil {
		return run()
	}
	key := c.key(query, args)
	if v, ok := c.get(key, m.applied.Load()); ok {
		return v.(T), nil
	}
	at := c.committed()
	v, err := run()
	if err == nil {
		c.put(key, at, v)
	}
	return v, err
}

// one runs a single-row query (projections.QueryOne), through the cache.
func one[T any](ctx context.Context, m *ReadModel, op, what string, scan func(projections.Row) (T, error), query string, args ...any) (T, error) {
	return cached(m, query, args, func() (T, error) {
		return projections.QueryOne(ctx, m.db, op, what, scan, query, args...)
	})
}

// cachedList is list through the cache, for the short lists every request
// reads.
func cachedList[T any](ctx context.Context, m *ReadModel, op string, scan func(projections.Row) (T, error), query string, args ...any) ([]T, error) {
	return cached(m, query, args, func() ([]T, error) {
		return projections.QueryList(ctx, m.db, op, scan, query, args...)
	})
}
