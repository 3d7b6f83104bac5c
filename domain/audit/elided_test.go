package audit

import (
	"errors"
	"strings"
	"testing"
)

// exportOf is records as an export's lines, those at the given positions
// elided.
func exportOf(records []Record, elide ...int) []Line {
	out := make([]Line, len(records))
	for i, r := range records {
		out[i] = Line{Record: r}
		for _, j := range elide {
			if i == j {
				e := r.Elide()
				out[i] = Line{Elided: &e}
			}
		}
	}
	return out
}

// verifyLines verifies an export's lines through their JSON (as a
// verifier reading the file does) and returns the head or the error.
func verifyLines(t *testing.T, lines []Line, anchors ...Head) (Head, error) {
	t.Helper()
	v := NewVerifier(Genesis, anchors...)
	for _, l := range lines {
		var b []byte
		if l.Elided != nil {
			b = AppendElidedJSON(nil, *l.Elided)
		} else {
			b = AppendJSON(nil, &l.Record)
		}
		parsed, err := ParseLine(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if err := v.AddLine(parsed); err != nil {
			return v.Head(), err
		}
	}
	return v.Finish()
}

func TestVerifyElided(t *testing.T) {
	t.Parallel()
	records := chain(t, 6)
	head := records[5].Head()
	for name, c := range map[string]struct {
		lines   []Line
		anchors []Head
		want    Problem
		seq     uint64
	}{
		"elided in the middle": {lines: exportOf(records, 2, 3)},
		"elided at the start":  {lines: exportOf(records, 0, 1)},
		"elided at the end":    {lines: exportOf(records, 4, 5), anchors: []Head{head}},
		"all elided":           {lines: exportOf(records, 0, 1, 2, 3, 4, 5)},
		"alternating":          {lines: exportOf(records, 0, 2, 4)},
		"elided prev_hash altered": {lines: func() []Line {
			l := exportOf(records, 2)
			l[2].Elided.PrevHash[0] ^= 1
			return l
		}(), want: ProblemAltered, seq: 3},
		"elided hash altered": {lines: func() []Line {
			// Its hash cannot be recomputed: the next record's link breaks.
			l := exportOf(records, 2)
			l[2].Elided.Hash[0] ^= 1
			return l
		}(), want: ProblemAltered, seq: 4},
		"last elided hash altered, against a head": {lines: func() []Line {
			l := exportOf(records, 5)
			l[5].Elided.Hash[0] ^= 1
			return l
		}(), anchors: []Head{head}, want: ProblemAltered, seq: 6},
		"elided removed": {lines: func() []Line {
			l := exportOf(records, 2)
			return append(l[:2:2], l[3:]...)
		}(), want: ProblemRemoved, seq: 4},
		"full record removed between elided ones": {lines: func() []Line {
			l := exportOf(records, 1, 3)
			return append(l[:2:2], l[3:]...)
		}(), want: ProblemRemoved, seq: 4},
		"elided seq changed": {lines: func() []Line {
			l := exportOf(records, 2)
			l[2].Elided.Seq = 9
			return l
		}(), want: ProblemReordered, seq: 9}, // as for a full record: the records after it fall in the gap it opened
		"elided duplicated": {lines: func() []Line {
			l := exportOf(records, 2)
			return append(l[:3:3], l[2:]...)
		}(), want: ProblemDuplicated, seq: 3},
		"elided swapped": {lines: func() []Line {
			l := exportOf(records, 2, 3)
			l[2], l[3] = l[3], l[2]
			return l
		}(), want: ProblemReordered, seq: 4},
		"tail truncated after elided": {lines: exportOf(records, 4, 5)[:5], anchors: []Head{head}, want: ProblemTruncated, seq: 6},
	} {
		got, err := verifyLines(t, c.lines, c.anchors...)
		if c.want == ProblemNone {
			if err != nil || got != head {
				t.Errorf("%s: head %v, err %v; want %v", name, got, err, head)
			}
			continue
		}
		var ce *ChainError
		if !errors.As(err, &ce) || ce.Problem != c.want || ce.Seq != c.seq {
			t.Errorf("%s: %v, want %s at seq %d", name, err, c.want, c.seq)
		}
	}
}

func TestElidedJSON(t *testing.T) {
	t.Parallel()
	r := chain(t, 2)[1]
	got := string(AppendElidedJSON(nil, r.Elide()))
	want := `{"seq":2,"prev_hash":"` + r.PrevHash.String() + `","hash":"` + r.Hash.String() + `","elided":true}`
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	l, err := ParseLine([]byte(got))
	if err != nil || l.Elided == nil || *l.Elided != r.Elide() {
		t.Fatalf("ParseLine: %+v, %v", l, err)
	}
	// A full record, with the store's source_position and "elided":false.
	full := strings.TrimSuffix(string(AppendJSON(nil, &r)), "}") + `,"source_position":7,"elided":false}`
	l, err = ParseLine([]byte(full))
	if err != nil || l.Elided != nil || l.Record != r {
		t.Fatalf("ParseLine of a full record: %+v, %v", l, err)
	}
	// Names ignoring case, as encoding/json reads them; a null elided is
	// a full record's.
	l, err = ParseLine([]byte(`{"SEQ":2,"Prev_Hash":"` + r.PrevHash.String() + `","hash":"` + r.Hash.String() + `","ELIDED":true}`))
	if err != nil || l.Elided == nil || *l.Elided != r.Elide() {
		t.Fatalf("ParseLine ignoring case: %+v, %v", l, err)
	}
	if l, err = ParseLine([]byte(strings.TrimSuffix(full, `"elided":false}`) + `"elided":null}`)); err != nil || l.Elided != nil || l.Record != r {
		t.Fatalf("ParseLine of a null elided: %+v, %v", l, err)
	}
	h := r.Hash.String()
	for _, bad := range []string{
		`not json`,
		`[1,2]`,
		`{"seq":2,"prev_hash":"` + h + `","hash":"` + h + `","elided":true,"action":"x"}`, // more than its place
		`{"seq":2,"hash":"` + h + `","elided":true}`,                                      // a member missing
		`{"seq":2,"prev_hash":"` + h + `","hash":"` + h + `","elided":1}`,
		`{"seq":2,"prev_hash":"zz","hash":"` + h + `","elided":true}`,
		`{"seq":-2,"prev_hash":"` + h + `","hash":"` + h + `","elided":true}`,
		`{"seq":2,"prev_hash":"` + h + `","hash":"` + h + `","Elided":true,"user_id":"x"}`, // names match ignoring case
		`{"seq":2,"prev_hash":"` + h + `","hash":"` + h + `","elided":true,"SEQ":3}`,
	} {
		if _, err := ParseLine([]byte(bad)); err == nil {
			t.Errorf("ParseLine accepted %s", bad)
		}
	}
}

// FuzzParseLine: no line makes ParseLine panic, and an elided record it
// accepts writes back (AppendElidedJSON) to a line that parses alike.
func FuzzParseLine(f *testing.F) {
	r := sample(0)
	r.Seq, r.Version = 1, 1
	f.Add(AppendElidedJSON(nil, r.Elide()))
	f.Add(AppendJSON(nil, &r))
	f.Add([]byte(`{"seq":1,"elided":true}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLine(b)
		if err != nil || l.Elided == nil {
			return
		}
		again, err := ParseLine(AppendElidedJSON(nil, *l.Elided))
		if err != nil || again.Elided == nil || *again.Elided != *l.Elided {
			t.Fatalf("%s: %+v, then %+v, %v", b, l.Elided, again.Elided, err)
		}
	})
}
