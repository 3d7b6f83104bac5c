package progress

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestLogsWhenNotATerminal(t *testing.T) {
	var logs bytes.Buffer
	r := New("rebuild sessions", Options{Output: &bytes.Buffer{}, Logger: slog.New(slog.NewTextHandler(&logs, nil)), LogEvery: 1})
	r.Update(50, 200)
	r.Update(200, 200)
	r.Finish(nil)
	out := logs.String()
	for _, want := range []string{"msg=progress", "operation=\"rebuild sessions\"", "events=50", "total=200", "percent=25%", "msg=done", "events=200"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	r.Update(300, 300) // after Finish: ignored
	if strings.Contains(logs.String(), "events=300") {
		t.Error("an update after Finish was reported")
	}
}

func TestDrawsABar(t *testing.T) {
	var out bytes.Buffer
	r := New("replay audit", Options{Output: &out, ForceBar: true, Unit: "records", Logger: slog.New(slog.DiscardHandler)})
	r.Update(5, 10)
	r.Update(10, 10)
	r.Finish(nil)
	if s := out.String(); !strings.Contains(s, "replay audit") || !strings.Contains(s, "10 / 10") || !strings.Contains(s, "100 %") {
		t.Fatalf("bar output:\n%q", s)
	}
}

func TestFailureLogsNothing(t *testing.T) {
	var logs bytes.Buffer
	r := New("import", Options{Output: &bytes.Buffer{}, Logger: slog.New(slog.NewTextHandler(&logs, nil)), LogEvery: 1 << 62})
	r.Update(1, 2)
	r.Finish(errors.New("boom"))
	if strings.Contains(logs.String(), "msg=done") {
		t.Fatalf("a failed operation logged done:\n%s", logs.String())
	}
}
