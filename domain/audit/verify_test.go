package audit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// chain seals n sample records after Genesis.
func chain(t testing.TB, n int) []Record {
	t.Helper()
	in := make([]Record, n)
	for i := range in {
		in[i] = sample(i)
	}
	out, _, err := SealAll(Genesis, in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// expectProblem verifies records (with anchors) and checks the problem and
// the seq of the record it is reported at.
func expectProblem(t *testing.T, records []Record, anchors []Head, want Problem, wantSeq uint64) {
	t.Helper()
	_, err := Verify(slices.Values(records), anchors...)
	if want == ProblemNone {
		if err != nil {
			t.Fatalf("unexpected %v", err)
		}
		return
	}
	var ce *ChainError
	if !errors.As(err, &ce) || ce.Problem != want || ce.Seq != wantSeq {
		t.Fatalf("err %v, want %s at seq %d", err, want, wantSeq)
	}
	sentinel := map[Problem]error{ProblemAltered: ErrAltered, ProblemRemoved: ErrRemoved, ProblemReordered: ErrReordered,
		ProblemDuplicated: ErrDuplicated, ProblemTruncated: ErrTruncated, ProblemUnsupported: ErrUnsupported}[want]
	if !errors.Is(err, sentinel) {
		t.Fatalf("errors.Is(%v, %s sentinel) is false", err, want)
	}
}

func TestVerifyIntact(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 10} {
		records := chain(t, n)
		head, err := Verify(slices.Values(records))
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		want := Genesis
		if n > 0 {
			want = records[n-1].Head()
		}
		if head != want {
			t.Fatalf("n=%d: head %+v, want %+v", n, head, want)
		}
		// The head anchors the chain.
		expectProblem(t, records, []Head{head}, ProblemNone, 0)
	}
}

// mutate changes one field of r, whatever its type.
func mutate(t *testing.T, f reflect.Value) {
	t.Helper()
	switch v := f.Addr().Interface().(type) {
	case *string:
		*v += "x"
	case *Outcome:
		*v = Denied
	case *int:
		*v++
	case *uint64:
		*v++
	case *time.Duration:
		*v++
	case *time.Time:
		*v = v.Add(time.Nanosecond)
	case *Hash:
		v[31] ^= 1
	default:
		t.Fatalf("no mutation for field type %T: teach the test (and the encoding!) about it", v)
	}
}

// TestTamperingEveryField changes each field of a record in the middle of
// a chain, without re-hashing, and expects "altered" at that record. The
// fields are enumerated by reflection: a field added to Record but left out
// of the encoding fails this test.
func TestTamperingEveryField(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(Record{})
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		t.Run(name, func(t *testing.T) {
			records := chain(t, 5)
			mutate(t, reflect.ValueOf(&records[2]).Elem().Field(i))
			want, seq := ProblemAltered, uint64(3)
			switch name {
			case "Version":
				want = ProblemUnsupported
			case "Seq":
				seq = 4 // the altered record now claims seq 4
			}
			expectProblem(t, records, nil, want, seq)
		})
	}
}

// TestRewrittenAndRehashed: a record changed and given a fresh hash is
// caught by the next record's prev_hash — and, for the last record, only
// by an anchor.
func TestRewrittenAndRehashed(t *testing.T) {
	t.Parallel()
	records := chain(t, 5)
	anchor := records[4].Head()
	for _, j := range []int{0, 2, 4} {
		rs := slices.Clone(records)
		rs[j].Action = "session.delete"
		rs[j].Hash = hashV1(&rs[j])
		if j < 4 {
			expectProblem(t, rs, nil, ProblemAltered, uint64(j+2))
		} else {
			expectProblem(t, rs, nil, ProblemNone, 0)
			expectProblem(t, rs, []Head{anchor}, ProblemAltered, 5)
		}
	}
}

func TestRemovedRecord(t *testing.T) {
	t.Parallel()
	records := chain(t, 6)
	for j := range 5 { // removing the last one is a truncation, below
		rs := slices.Delete(slices.Clone(records), j, j+1)
		expectProblem(t, rs, nil, ProblemRemoved, uint64(j+2))
	}
	// Several in a row.
	expectProblem(t, slices.Delete(slices.Clone(records), 1, 4), nil, ProblemRemoved, 5)
	// Removed just before the end: found at Finish.
	expectProblem(t, []Record{records[0], records[2]}, nil, ProblemRemoved, 3)
}

func TestSwappedPair(t *testing.T) {
	t.Parallel()
	records := chain(t, 6)
	for j := range 5 {
		rs := slices.Clone(records)
		rs[j], rs[j+1] = rs[j+1], rs[j]
		expectProblem(t, rs, nil, ProblemReordered, uint64(j+2))
	}
	// A record moved far back: appears after a later one.
	rs := slices.Clone(records)
	moved := rs[1]
	rs = slices.Insert(slices.Delete(rs, 1, 2), 4, moved) // 1 3 4 5 2 6
	expectProblem(t, rs, nil, ProblemReordered, 3)
	// A record moved far ahead: appears before earlier ones.
	rs = slices.Clone(records)
	moved = rs[4]
	rs = slices.Insert(slices.Delete(rs, 4, 5), 1, moved) // 1 5 2 3 4 6
	expectProblem(t, rs, nil, ProblemReordered, 5)
}

func TestDuplicatedRecord(t *testing.T) {
	t.Parallel()
	records := chain(t, 4)
	rs := slices.Insert(slices.Clone(records), 2, records[1])
	expectProblem(t, rs, nil, ProblemDuplicated, 2)
	// A copy of an older record later on is out of order.
	rs = slices.Insert(slices.Clone(records), 3, records[0])
	expectProblem(t, rs, nil, ProblemReordered, 1)
}

// TestTruncatedTail: removing the last records leaves a consistent chain;
// only the anchored head reveals it.
func TestTruncatedTail(t *testing.T) {
	t.Parallel()
	records := chain(t, 6)
	head, err := Verify(slices.Values(records))
	if err != nil {
		t.Fatal(err)
	}
	truncated := records[:4]
	expectProblem(t, truncated, nil, ProblemNone, 0)
	expectProblem(t, truncated, []Head{head}, ProblemTruncated, 6)
	expectProblem(t, nil, []Head{head}, ProblemTruncated, 6)
	// An anchor inside the verified range is checked too; an older anchor
	// still passes on the full chain.
	expectProblem(t, records, []Head{records[2].Head(), head}, ProblemNone, 0)
	forged := records[2].Head()
	forged.Hash[0] ^= 1
	expectProblem(t, records, []Head{forged}, ProblemAltered, 3)
}

// TestVerifierFromTheMiddle: a window of the trail verifies from a trusted
// head, and a wrong start is refused at once.
func TestVerifierFromTheMiddle(t *testing.T) {
	t.Parallel()
	records := chain(t, 8)
	v := NewVerifier(records[3].Head(), records[7].Head())
	for _, r := range records[4:] {
		if err := v.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	head, err := v.Finish()
	if err != nil || head != records[7].Head() {
		t.Fatalf("head %+v, %v", head, err)
	}
	wrong := records[2].Head()
	wrong.Seq = 4
	v = NewVerifier(wrong)
	if err := v.Add(records[4]); !errors.Is(err, ErrAltered) {
		t.Fatalf("wrong start: %v", err)
	}
	// An anchor at the start's seq must match the start.
	if _, err := NewVerifier(records[3].Head(), wrong).Finish(); !errors.Is(err, ErrAltered) {
		t.Fatalf("conflicting anchor: %v", err)
	}
}

// TestVerifierErrorIsSticky: after the first problem, every call reports it.
func TestVerifierErrorIsSticky(t *testing.T) {
	t.Parallel()
	records := chain(t, 3)
	bad := records[0]
	bad.Action = "x"
	v := NewVerifier(Genesis)
	first := v.Add(bad)
	if first == nil {
		t.Fatal("altered record accepted")
	}
	if err := v.Add(records[1]); err != first {
		t.Fatalf("later Add: %v", err)
	}
	if _, err := v.Finish(); err != first {
		t.Fatalf("Finish: %v", err)
	}
}

// TestRandomizedTampering: random chains, one random tampering each, and
// the problem each kind of tampering must produce.
func TestRandomizedTampering(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	outcomes := []Outcome{Success, Failure, Denied}
	for round := range 500 {
		n := 2 + rng.IntN(30)
		in := make([]Record, n)
		for i := range in {
			in[i] = Record{
				Time:      t0.Add(time.Duration(rng.Int64N(1e15))),
				UserID:    fmt.Sprint(rng.Uint64()),
				AccessKey: fmt.Sprintf("AK%d", rng.IntN(5)),
				Action:    []string{"session.create", "session.list", "vfolder.delete"}[rng.IntN(3)],
				EntityID:  fmt.Sprint(rng.IntN(100)),
				ClientIP:  fmt.Sprintf("10.0.%d.%d", rng.IntN(256), rng.IntN(256)),
				Outcome:   outcomes[rng.IntN(3)],
				Status:    200 + rng.IntN(400),
				Duration:  time.Duration(rng.Int64N(int64(time.Minute))),
				RequestID: fmt.Sprint(rng.Uint32()),
			}
		}
		records, head, err := SealAll(Genesis, in)
		if err != nil {
			t.Fatal(err)
		}
		j := rng.IntN(n - 1) // a record that is not the last
		rs := slices.Clone(records)
		var want Problem
		var seq uint64
		kind := rng.IntN(5)
		switch kind {
		case 0: // alter one field without re-hashing
			i := rng.IntN(reflect.TypeOf(Record{}).NumField())
			name := reflect.TypeOf(Record{}).Field(i).Name
			if name == "Version" {
				continue // an unknown version: covered by TestTamperingEveryField
			}
			mutate(t, reflect.ValueOf(&rs[j]).Elem().Field(i))
			want, seq = ProblemAltered, uint64(j+1)
			if name == "Seq" {
				seq++
			}
		case 1: // remove
			rs = slices.Delete(rs, j, j+1)
			want, seq = ProblemRemoved, uint64(j+2)
		case 2: // swap with the next
			rs[j], rs[j+1] = rs[j+1], rs[j]
			want, seq = ProblemReordered, uint64(j+2)
		case 3: // truncate: invisible without the anchor
			rs = rs[:j+1]
			expectProblem(t, rs, nil, ProblemNone, 0)
			want, seq = ProblemTruncated, head.Seq
		case 4: // rewrite and re-hash
			rs[j].Status++
			rs[j].Hash = hashV1(&rs[j])
			want, seq = ProblemAltered, uint64(j+2)
		}
		_, err = Verify(slices.Values(rs), head)
		var ce *ChainError
		if !errors.As(err, &ce) || ce.Problem != want || ce.Seq != seq {
			t.Fatalf("round %d, tampering %d at %d of %d: err %v, want %s at seq %d", round, kind, j, n, err, want, seq)
		}
	}
}
