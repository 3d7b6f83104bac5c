package auditarchive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain/audit"
)

// TestRecordsReadsFilesInChainOrder: files are read in the order of their
// names (zero-padded seqs), other files are ignored, and a line that is
// not a record is named by file and line.
func TestRecordsReadsFilesInChainOrder(t *testing.T) {
	t.Parallel()
	in := make([]audit.Record, 5)
	for i := range in {
		in[i] = audit.Record{Time: time.Unix(int64(1_800_000_000+i), 0), Action: "GET /v1/sessions", Outcome: audit.Success, Status: 200}
	}
	sealed, _, err := audit.SealAll(audit.Genesis, in)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, recs ...audit.Record) {
		var b []byte
		for _, r := range recs {
			b = append(audit.AppendJSON(b, &r), '\n')
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Written out of order; a stray file and the heads file are not records.
	write(fileName(3, 5), sealed[2:]...)
	write(fileName(1, 2), sealed[:2]...)
	write("notes.txt")
	write(HeadsFile)
	var seqs []uint64
	for r, err := range Records(dir) {
		if err != nil {
			t.Fatal(err)
		}
		if string(r.Raw) != string(audit.AppendJSON(nil, &sealed[r.Seq-1])) {
			t.Fatalf("record %d: raw %s", r.Seq, r.Raw)
		}
		seqs = append(seqs, r.Seq)
	}
	if len(seqs) != 5 || seqs[0] != 1 || seqs[4] != 5 {
		t.Fatalf("seqs %v", seqs)
	}
	if _, err := audit.Verify(func(yield func(audit.Record) bool) {
		for r := range Records(dir) {
			if !yield(r.Record) {
				return
			}
		}
	}); err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(filepath.Join(dir, fileName(6, 6)), []byte("{\"seq\":6}\nnot json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var last error
	for _, err := range Records(dir) {
		last = err
	}
	if last == nil || !strings.Contains(last.Error(), fileName(6, 6)+" line 2") {
		t.Fatalf("a bad line: %v", last)
	}
	for _, err := range Records(t.TempDir()) {
		if err == nil || !strings.Contains(err.Error(), "no record files") {
			t.Fatalf("an empty directory: %v", err)
		}
	}
}
