package runtime

import (
	"errors"
	"strings"
	"testing"
)

// The log "0123456789" is given in pieces; every range of it must come
// out whole, whatever the cut, as must where it ended.
func TestRangeWriter(t *testing.T) {
	t.Parallel()
	const log = "0123456789"
	for _, tc := range []struct {
		name  string
		r     LogRange
		base  int64
		ended bool
		want  string
		res   LogRead
	}{
		{"all", LogRange{}, 0, true, log, LogRead{Start: 0, Next: 10, Complete: true}},
		{"running", LogRange{}, 0, false, log, LogRead{Start: 0, Next: 10}},
		{"from the middle", LogRange{Offset: 4}, 0, true, "456789", LogRead{Start: 4, Next: 10, Complete: true}},
		{"limited", LogRange{Offset: 4, Limit: 3}, 0, true, "456", LogRead{Start: 4, Next: 7}},
		{"limit to the end", LogRange{Offset: 4, Limit: 6}, 0, true, "456789", LogRead{Start: 4, Next: 10}},
		{"limit past the end", LogRange{Offset: 4, Limit: 7}, 0, true, "456789", LogRead{Start: 4, Next: 10, Complete: true}},
		{"past the end", LogRange{Offset: 12}, 0, true, "", LogRead{Start: 12, Next: 12, Complete: true}},
		{"at the end, running", LogRange{Offset: 10}, 0, false, "", LogRead{Start: 10, Next: 10}},
		{"base cut before the offset", LogRange{Offset: 1}, 5, true, "0123456789", LogRead{Start: 5, Next: 15, Complete: true}},
		{"base before the offset", LogRange{Offset: 13}, 5, true, "89", LogRead{Start: 13, Next: 15, Complete: true}},
	} {
		for _, pieces := range [][]string{{log}, {"0", "12", "345", "6789"}, strings.Split(log, "")} {
			var b strings.Builder
			rw := NewRangeWriter(&b, tc.r, tc.base)
			for _, p := range pieces {
				if n, err := rw.Write([]byte(p)); n != len(p) || err != nil {
					t.Fatalf("%s: Write(%q) = %d, %v", tc.name, p, n, err)
				}
			}
			if got := rw.Result(tc.ended); b.String() != tc.want || got != tc.res {
				t.Errorf("%s in %d pieces: wrote %q, %+v; want %q, %+v", tc.name, len(pieces), b.String(), got, tc.want, tc.res)
			}
		}
	}
}

func TestRangeWriterTellsTheStartFirst(t *testing.T) {
	t.Parallel()
	w := &noting{start: -1}
	rw := NewRangeWriter(w, LogRange{Offset: 3}, 0)
	if w.start != 3 {
		t.Fatalf("start noted %d, want 3 before any byte", w.start)
	}
	_, _ = rw.Write([]byte("012345"))
	if w.b.String() != "345" {
		t.Errorf("wrote %q, want \"345\"", w.b.String())
	}
}

func TestLogRangeValidate(t *testing.T) {
	t.Parallel()
	for _, r := range []LogRange{{Offset: -1}, {Limit: -1}} {
		if err := r.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalid", r, err)
		}
	}
	if err := (LogRange{Offset: 5, Limit: 1, Follow: true}).Validate(); err != nil {
		t.Errorf("Validate of a good range: %v", err)
	}
}

type noting struct {
	start int64
	b     strings.Builder
}

func (n *noting) NoteLogStart(s int64) {
	if n.start == -1 {
		n.start = s
	}
}

func (n *noting) Write(p []byte) (int, error) {
	if n.start == -1 {
		panic("write before the start was noted")
	}
	return n.b.Write(p)
}
