package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/domain/audit"
)

// TestReplayAuditExport verifies an NDJSON export file against signed
// heads: intact, with a record elided (as a domain auditor's export has
// it), its tail cut, a record re-hashed with all after it, and through the
// command line with --from-file -.
func TestReplayAuditExport(t *testing.T) {
	store := sealedTrail(t, 8)
	var export bytes.Buffer
	if _, err := replayAudit(context.Background(), store, auditReplayOptions{page: 4}, &export); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(export.String()), "\n")
	if len(lines) != 8 {
		t.Fatalf("export of %d lines", len(lines))
	}
	key, line := headKey(t)
	keys := writeFile(t, "keys.txt", line+"\n")
	recs := records(t, store)
	heads := writeFile(t, "heads.ndjson", signHeads(key, recs, 4, 8))
	verify := func(content string) error {
		_, err := replayAuditFile(context.Background(), writeFile(t, "export.ndjson", content), nil,
			auditReplayOptions{verify: true, quiet: true, heads: []string{heads}, headKeys: keys}, io.Discard)
		return err
	}
	if err := verify(export.String()); err != nil {
		t.Fatalf("intact: %v", err)
	}
	elided := append([]string(nil), lines...)
	elided[2] = string(audit.AppendElidedJSON(nil, recs[2].Record.Elide())) + "\n"
	if err := verify(strings.Join(elided, "")); err != nil {
		t.Fatalf("record 3 elided: %v", err)
	}
	var ce *audit.ChainError
	if err := verify(strings.Join(lines[:6], "")); !errors.As(err, &ce) || ce.Problem != audit.ProblemTruncated || ce.Seq != 8 {
		t.Fatalf("the last 2 lines cut: %v", err)
	}
	plain := []audit.Record{recs[4].Record, recs[5].Record, recs[6].Record, recs[7].Record}
	plain[0].Action = "GET /v1/nothing"
	resealed, _, err := audit.SealAll(recs[3].Head(), plain)
	if err != nil {
		t.Fatal(err)
	}
	rehashed := strings.Join(lines[:4], "")
	for _, r := range resealed {
		rehashed += string(audit.AppendJSON(nil, &r)) + "\n"
	}
	if err := verify(rehashed); !errors.As(err, &ce) || ce.Problem != audit.ProblemAltered || ce.Seq != 8 {
		t.Fatalf("record 5 rewritten and the rest re-hashed: %v", err)
	}

	root := newRootCommand()
	var stderr bytes.Buffer
	root.SetIn(strings.NewReader(export.String()))
	root.SetErr(&stderr)
	root.SetArgs([]string{"replay", "audit", "--verify", "--quiet", "--from-file", "-", "--heads", heads, "--head-keys", keys})
	if err := root.Execute(); err != nil || !strings.Contains(stderr.String(), "audit trail verified: 8 records, head 8:") {
		t.Fatalf("cairn replay audit --from-file -: %v, %s", err, stderr.String())
	}
}
