package audit

import (
	"fmt"
	"iter"
)

// Problem is what verification found wrong. Append-only.
type Problem uint8

const (
	ProblemNone        Problem = iota
	ProblemAltered             // a record's content does not match its hash, or its prev_hash does not match the record before it, or an anchor
	ProblemRemoved             // a gap in the sequence: records are missing
	ProblemReordered           // a record appears before one with a lower seq
	ProblemDuplicated          // the same record appears twice in a row
	ProblemTruncated           // the chain ends before an anchored head
	ProblemUnsupported         // a record's encoding version is unknown to this build
)

var problemNames = [...]string{"none", "altered", "removed", "reordered", "duplicated", "truncated", "unsupported-version"}

func (p Problem) String() string {
	if int(p) < len(problemNames) {
		return problemNames[p]
	}
	return fmt.Sprintf("problem(%d)", p)
}

// ChainError reports the first bad record found.
type ChainError struct {
	Problem  Problem
	Seq      uint64 // seq the bad record carries (for truncation: the anchored seq that is missing)
	Index    int    // its 0-based position in the records verified (-1 for truncation)
	Expected uint64 // the seq expected at that position
	Detail   string
}

// Sentinels for errors.Is: errors.Is(err, audit.ErrAltered).
var (
	ErrAltered     = &ChainError{Problem: ProblemAltered}
	ErrRemoved     = &ChainError{Problem: ProblemRemoved}
	ErrReordered   = &ChainError{Problem: ProblemReordered}
	ErrDuplicated  = &ChainError{Problem: ProblemDuplicated}
	ErrTruncated   = &ChainError{Problem: ProblemTruncated}
	ErrUnsupported = &ChainError{Problem: ProblemUnsupported}
)

func (e *ChainError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("audit chain: %s: %s", e.Problem, e.Detail)
	}
	return fmt.Sprintf("audit chain: %s at record seq %d (position %d, expected seq %d): %s", e.Problem, e.Seq, e.Index, e.Expected, e.Detail)
}

// Is matches the sentinels by problem.
func (e *ChainError) Is(target error) bool {
	t, ok := target.(*ChainError)
	return ok && t.Detail == "" && t.Seq == 0 && t.Index == 0 && t.Expected == 0 && t.Problem == e.Problem
}

// Verifier checks records one at a time, in the order they are stored
// (streaming: it keeps two heads, not the records). Add each record,
// then Finish. The first problem found is returned by Add or Finish and by
// every later call.
//
// A record whose seq jumps ahead leaves a gap that is either a removal or
// a move: the Verifier then reads on, looking only for a record from the
// gap. If one comes, the jump was a reordering (reported at that point);
// if the trail ends first, records were removed (reported by Finish). Either
// way the report is about the record that jumped ahead.
type Verifier struct {
	head    Head
	index   int
	held    Head // seq and hash of the record that jumped ahead of head.Seq+1
	heldAt  int  // its position; -1 when there is none
	anchors map[uint64]Hash
	maxSeq  uint64 // highest anchored seq
	err     error
}

// NewVerifier verifies a chain that continues after start (Genesis, or a
// trusted head when verifying from the middle of the trail). Anchors are
// heads recorded elsewhere (published, stored apart): a record at an
// anchor's seq must have its hash, and the chain must reach every anchor
// (otherwise its tail was truncated).
func NewVerifier(start Head, anchors ...Head) *Verifier {
	v := &Verifier{head: start, heldAt: -1, anchors: map[uint64]Hash{}}
	for _, a := range anchors {
		if a.Seq == start.Seq && a.Hash != start.Hash {
			v.err = &ChainError{Problem: ProblemAltered, Seq: a.Seq, Index: -1, Expected: a.Seq,
				Detail: "the start head differs from an anchor at the same seq"}
		}
		if a.Seq <= start.Seq {
			continue // before the verified range: nothing to compare with
		}
		v.anchors[a.Seq] = a.Hash
		v.maxSeq = max(v.maxSeq, a.Seq)
	}
	return v
}

// Head is the last record verified so far.
func (v *Verifier) Head() Head { return v.head }

// Add verifies the next record.
func (v *Verifier) Add(r Record) error { return v.add(r, false) }

// AddElided verifies the next record of an export whose content the
// reader may not see: its place in the chain is checked as a full
// record's (dense seq, its prev_hash the hash of the record before, its
// hash the next record's prev_hash, an anchor at its seq), but its hash
// cannot be recomputed. A changed elided hash shows as the next record's
// broken link; at the end of an export, only an anchor or a signed head
// can show it.
func (v *Verifier) AddElided(e Elided) error {
	return v.add(Record{Seq: e.Seq, PrevHash: e.PrevHash, Hash: e.Hash}, true)
}

// add verifies the next record, recomputing its hash unless it is elided.
func (v *Verifier) add(r Record, elided bool) error {
	if v.err != nil {
		return v.err
	}
	at := v.index
	v.index++
	expected := v.head.Seq + 1
	fail := func(p Problem, seq uint64, index int, detail string, args ...any) error {
		v.err = &ChainError{Problem: p, Seq: seq, Index: index, Expected: expected, Detail: fmt.Sprintf(detail, args...)}
		return v.err
	}

	if v.heldAt >= 0 {
		// An earlier record jumped ahead: is one it skipped further on?
		h := v.held
		if r.Seq >= expected && r.Seq < h.Seq {
			return fail(ProblemReordered, h.Seq, v.heldAt, "record %d appears before record %d", h.Seq, r.Seq)
		}
		return nil
	}

	if !elided {
		want, known := computeHash(&r)
		if !known {
			return fail(ProblemUnsupported, r.Seq, at, "encoding version %d", r.Version)
		}
		if want != r.Hash {
			return fail(ProblemAltered, r.Seq, at, "its content does not match its hash")
		}
	}
	switch {
	case r.Seq > expected:
		v.held, v.heldAt = r.Head(), at
		return nil
	case r.Seq < expected:
		if r.Seq == v.head.Seq && r.Hash == v.head.Hash {
			return fail(ProblemDuplicated, r.Seq, at, "record %d appears twice", r.Seq)
		}
		return fail(ProblemReordered, r.Seq, at, "record %d appears after record %d", r.Seq, v.head.Seq)
	}
	if r.PrevHash != v.head.Hash {
		return fail(ProblemAltered, r.Seq, at, "its prev_hash does not match the hash of record %d: one of the two was rewritten", v.head.Seq)
	}
	if a, ok := v.anchors[r.Seq]; ok && a != r.Hash {
		return fail(ProblemAltered, r.Seq, at, "its hash differs from the anchored head %s", a)
	}
	v.head = r.Head()
	return nil
}

// Finish ends verification and returns the chain's head: publish or store
// it apart (an anchor) so that a later verification detects a truncated
// tail, which the records alone cannot show.
func (v *Verifier) Finish() (Head, error) {
	if v.err != nil {
		return v.head, v.err
	}
	expected := v.head.Seq + 1
	if v.heldAt >= 0 {
		h := v.held
		v.err = &ChainError{Problem: ProblemRemoved, Seq: h.Seq, Index: v.heldAt, Expected: expected,
			Detail: fmt.Sprintf("%s missing before record %d", span(expected, h.Seq-1), h.Seq)}
		return v.head, v.err
	}
	if v.maxSeq > v.head.Seq {
		v.err = &ChainError{Problem: ProblemTruncated, Seq: v.maxSeq, Index: -1, Expected: expected,
			Detail: fmt.Sprintf("the chain ends at record %d but record %d was anchored", v.head.Seq, v.maxSeq)}
		return v.head, v.err
	}
	return v.head, nil
}

// Verify checks a whole trail from Genesis against optional anchors and
// returns its head. See Verifier.
func Verify(records iter.Seq[Record], anchors ...Head) (Head, error) {
	v := NewVerifier(Genesis, anchors...)
	for r := range records {
		if err := v.Add(r); err != nil {
			return v.Head(), err
		}
	}
	return v.Finish()
}

func span(from, to uint64) string {
	if from == to {
		return fmt.Sprintf("record %d", from)
	}
	return fmt.Sprintf("records %d to %d", from, to)
}
