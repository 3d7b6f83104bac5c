package node

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
)

// Records survive reopening, and their state only moves forward.
func TestLedger(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := openLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	k, s := uuid.New(), uuid.New()
	create := &protocol.KernelCreate{KernelID: k, SessionID: s, AgentID: "a", Image: "img", AllocationRevision: 3, At: time.Now().UTC()}
	if _, ok, err := l.get(k); err != nil || ok {
		t.Fatalf("get before any write: %v, %v", ok, err)
	}
	steps := []struct {
		state   recordState
		applied bool
		want    recordState
	}{
		{statePending, true, statePending},
		{stateStarted, true, stateStarted},
		{stateFailed, false, stateStarted}, // started and failed exclude each other
		{statePending, false, stateStarted},
		{stateDestroying, true, stateDestroying},
		{stateStarted, false, stateDestroying}, // a late start never undoes a destroy
		{stateRemoved, true, stateRemoved},
		{stateDestroying, false, stateRemoved},
	}
	for i, st := range steps {
		r, applied, err := l.advance(k, s, st.state, func(r *record) {
			if r.Create == nil {
				r.Create = create
			}
		})
		if err != nil || applied != st.applied || r.State != st.want {
			t.Errorf("step %d (%s): state %s applied %v err %v; want %s, %v", i, st.state, r.State, applied, err, st.want, st.applied)
		}
	}

	// A leftover of an interrupted write and a stranger are ignored.
	if err := os.WriteFile(filepath.Join(dir, "kernels", ".tmp-x-1"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kernels", "README"), []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	l2, err := openLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, err := l2.all()
	if err != nil || len(all) != 1 {
		t.Fatalf("all = %+v, %v; want the one record", all, err)
	}
	if r := all[0]; r.KernelID != k || r.SessionID != s || r.State != stateRemoved || r.Create == nil || r.Create.AllocationRevision != 3 {
		t.Errorf("reopened record = %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "kernels", ".tmp-x-1")); !os.IsNotExist(err) {
		t.Errorf("leftover temporary file kept: %v", err)
	}
	if err := l2.forget(k); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := l2.get(k); ok {
		t.Error("a forgotten record is still there")
	}

	// A corrupt record is an error, not silently a missing one.
	bad := uuid.New()
	if err := os.WriteFile(filepath.Join(dir, "kernels", bad.String()+".json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l2.get(bad); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("corrupt record: %v", err)
	}
}

func TestLogArchive(t *testing.T) {
	t.Parallel()
	a, err := openLogArchive(t.TempDir(), 10)
	if err != nil {
		t.Fatal(err)
	}
	k := uuid.New()
	if _, ok, err := a.read(k, runtime.LogOptions{}); ok || err != nil {
		t.Errorf("read before save: %v, %v", ok, err)
	}
	// 17 bytes from log offset 100: the first 7 are cut.
	if err := a.save(k, []byte("0123456789abcdef\n"), 100); err != nil {
		t.Fatal(err)
	}
	got, ok, err := a.read(k, runtime.LogOptions{})
	if err != nil || !ok || string(got) != "789abcdef\n" {
		t.Errorf("read = %q, %v, %v; want the last 10 bytes", got, ok, err)
	}
	for _, tc := range []struct {
		r    runtime.LogRange
		want string
		res  runtime.LogRead
	}{
		{runtime.LogRange{}, "789abcdef\n", runtime.LogRead{Start: 107, Next: 117, Complete: true}},
		{runtime.LogRange{Offset: 110}, "abcdef\n", runtime.LogRead{Start: 110, Next: 117, Complete: true}},
		{runtime.LogRange{Offset: 110, Limit: 2}, "ab", runtime.LogRead{Start: 110, Next: 112}},
		{runtime.LogRange{Offset: 117, Follow: true}, "", runtime.LogRead{Start: 117, Next: 117, Complete: true}},
	} {
		var b strings.Builder
		res, ok, err := a.readRange(k, tc.r, &b)
		if err != nil || !ok || b.String() != tc.want || res != tc.res {
			t.Errorf("readRange(%+v) = %q, %+v, %v, %v; want %q, %+v", tc.r, b.String(), res, ok, err, tc.want, tc.res)
		}
	}
	if err := a.forget(k); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := a.readRange(k, runtime.LogRange{}, io.Discard); ok || err != nil {
		t.Errorf("readRange after forget: %v, %v", ok, err)
	}
}

func TestTailKeeper(t *testing.T) {
	t.Parallel()
	k := &tailKeeper{max: 4}
	for _, s := range []string{"ab", "cdefghij", "k", "lmn"} {
		_, _ = k.Write([]byte(s))
	}
	got, start := k.kept()
	if string(got) != "klmn" || start != 10 {
		t.Errorf("kept = %q from %d, want \"klmn\" from 10", got, start)
	}
}

func TestTail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		opts runtime.LogOptions
		want string
	}{
		{"a\nb\nc\n", runtime.LogOptions{}, "a\nb\nc\n"},
		{"a\nb\nc\n", runtime.LogOptions{Tail: 1}, "c\n"},
		{"a\nb\nc\n", runtime.LogOptions{Tail: 2}, "b\nc\n"},
		{"a\nb\nc\n", runtime.LogOptions{Tail: 5}, "a\nb\nc\n"},
		{"a\nb\nc", runtime.LogOptions{Tail: 2}, "b\nc"},
		{"", runtime.LogOptions{Tail: 2}, ""},
		{"a\nb\nc\n", runtime.LogOptions{Tail: 2, MaxBytes: 3}, "\nc\n"},
		{"abcdef", runtime.LogOptions{MaxBytes: 2}, "ef"},
	} {
		if got := string(tail([]byte(tc.in), tc.opts)); got != tc.want {
			t.Errorf("tail(%q, %+v) = %q, want %q", tc.in, tc.opts, got, tc.want)
		}
	}
}
