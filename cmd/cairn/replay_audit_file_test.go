package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/domain/audit"
)

// sealedLines are n sealed records of trailRecord, as export lines.
func sealedLines(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	head := audit.Genesis
	for i := range n {
		r, err := audit.Seal(head, trailRecord(i))
		if err != nil {
			t.Fatal(err)
		}
		out, head = append(out, string(audit.AppendJSON(nil, &r))), r.Head()
	}
	return out
}

// --from-file - reads standard input, skips blank lines, prints what the
// filters match exactly as read, and verifies the whole chain.
func TestReplayAuditFromStdin(t *testing.T) {
	lines := sealedLines(t, 5)
	in := strings.NewReader("\n" + strings.Join(lines, "\n\n") + "\n")
	var out bytes.Buffer
	head, err := replayAuditFile(context.Background(), "-", in, auditReplayOptions{verify: true, actor: "bob"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if head.Seq != 5 {
		t.Fatalf("head %+v, want seq 5", head)
	}
	if want := lines[1] + "\n" + lines[3] + "\n"; out.String() != want {
		t.Fatalf("printed:\n%s\nwant bob's records:\n%s", out.String(), want)
	}
}

// A line that is no record stops the replay, naming the line; a broken
// chain is a *audit.ChainError.
func TestReplayAuditFromFileRefuses(t *testing.T) {
	lines := sealedLines(t, 4)
	bad := append(lines[:2:2], "{not json", lines[2])
	_, err := replayAuditFile(context.Background(), "-", strings.NewReader(strings.Join(bad, "\n")), auditReplayOptions{verify: true, quiet: true}, &bytes.Buffer{})
	var le *exportLineError
	if !errors.As(err, &le) || le.line != 3 {
		t.Fatalf("a line that is no record: %v", err)
	}
	gap := []string{lines[0], lines[2], lines[3]}
	_, err = replayAuditFile(context.Background(), "-", strings.NewReader(strings.Join(gap, "\n")), auditReplayOptions{verify: true, quiet: true}, &bytes.Buffer{})
	var ce *audit.ChainError
	if !errors.As(err, &ce) || ce.Problem != audit.ProblemRemoved || ce.Seq != 3 {
		t.Fatalf("a removed record: %v", err)
	}
	if _, err := replayAuditFile(context.Background(), "-", strings.NewReader(""), auditReplayOptions{verify: true, actor: "a@example.com"}, &bytes.Buffer{}); err == nil {
		t.Fatal("an e-mail --actor with --from-file: no error")
	}
}
