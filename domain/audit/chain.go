package audit

import (
	"fmt"
	"sync"
)

// Seal places r after prev: it sets Version, Seq (prev.Seq+1) and
// PrevHash, normalizes the record to its stored form (UTC time, valid
// UTF-8) and computes Hash. Whatever r carried in those fields is
// overwritten. Seal is pure; Chain keeps the head between calls.
func Seal(prev Head, r Record) (Record, error) {
	if err := r.validate(); err != nil {
		return Record{}, err
	}
	r = r.normalize()
	r.Version = CurrentVersion
	r.Seq = prev.Seq + 1
	r.PrevHash = prev.Hash
	r.Hash = hashV1(&r)
	return r, nil
}

// SealAll seals records in order after prev and returns them with the new
// head. It is all or nothing: one invalid record seals none.
func SealAll(prev Head, records []Record) ([]Record, Head, error) {
	return SealAppend(make([]Record, 0, len(records)), prev, records)
}

// SealAppend is SealAll appending the sealed records to dst (a writer that
// seals again and again reuses dst's memory). On error it returns dst as
// it was: nothing is sealed.
func SealAppend(dst []Record, prev Head, records []Record) ([]Record, Head, error) {
	out := dst
	head := prev
	for i, r := range records {
		sealed, err := Seal(head, r)
		if err != nil {
			clear(out[len(dst):])
			return dst, prev, fmt.Errorf("record %d: %w", i, err)
		}
		out, head = append(out, sealed), sealed.Head()
	}
	return out, head, nil
}

// Chain is the writer's side of the audit trail: it holds the head and
// seals records after it. It is safe for concurrent use; records sealed by
// one Append call are consecutive.
//
// The head must be the head of what is stored: a writer starts from the
// last stored record (NewChain(last.Head())), and if storing sealed records
// fails it must start again from what the store holds, never append other
// records after a head that was not stored. Storing record n+1 in the audit
// stream with expected revision n makes the store enforce this.
type Chain struct {
	mu   sync.Mutex
	head Head
}

// NewChain starts a chain after head (Genesis for a new trail).
func NewChain(head Head) *Chain { return &Chain{head: head} }

// Head is the seq and hash of the last record sealed.
func (c *Chain) Head() Head {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.head
}

// Append seals records after the head and advances it (all or nothing).
func (c *Chain) Append(records ...Record) ([]Record, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sealed, head, err := SealAll(c.head, records)
	if err != nil {
		return nil, err
	}
	c.head = head
	return sealed, nil
}
