package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/auditarchive"
)

// replayAuditFile is replayAudit over an NDJSON export (GET
// /v1/audit/stream, or this command's own output) instead of the store:
// path names the file, "-" standard input. The export continues the
// archives of o.archives, and o's signed heads are anchors. Elided records
// (a domain auditor's export) are verified for their place in the chain
// and not printed. Blank lines are skipped; a line that is not a record
// stops the replay with its line number.
func replayAuditFile(ctx context.Context, path string, stdin io.Reader, o auditReplayOptions, out io.Writer) (audit.Head, error) {
	filter, err := o.filter()
	if err != nil {
		return audit.Head{}, err
	}
	if strings.Contains(filter.actor, "@") {
		return audit.Head{}, fmt.Errorf("--actor %q: with --from-file, name the user by id (an e-mail address is resolved in the store)", filter.actor)
	}
	anchors, err := parseAnchors(o.anchors)
	if err != nil {
		return audit.Head{}, err
	}
	signed, err := o.signedAnchors()
	if err != nil {
		return audit.Head{}, err
	}
	anchors = append(anchors, signed...)
	in := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return audit.Head{}, fmt.Errorf("--from-file: %w", err)
		}
		defer f.Close()
		in = f
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20) // a record is far below 16 MiB
	w := bufio.NewWriter(out)
	v := audit.NewVerifier(audit.Genesis, anchors...)
	head, err := func() (audit.Head, error) {
		var read uint64
		// Archives (oldest first) come before the export: it continues them.
		for _, dir := range o.archives {
			for r, err := range auditarchive.Records(dir) {
				if err == nil && o.verify {
					err = v.Add(r.Record)
				}
				if err != nil {
					return v.Head(), err
				}
			}
		}
		for line := 1; sc.Scan(); line++ {
			if err := ctx.Err(); err != nil {
				return v.Head(), err
			}
			raw := bytes.TrimSpace(sc.Bytes())
			if len(raw) == 0 {
				continue
			}
			rec, err := audit.ParseLine(raw)
			if err != nil {
				return v.Head(), &exportLineError{line: line, err: err}
			}
			if o.verify {
				if err := v.AddLine(rec); err != nil {
					return v.Head(), err
				}
			}
			if !o.quiet && rec.Elided == nil && filter.match(rec.Record) {
				w.Write(raw)
				w.WriteByte('\n')
			}
			read++
		}
		if err := sc.Err(); err != nil {
			return v.Head(), fmt.Errorf("--from-file: %w", err)
		}
		if !o.verify {
			return audit.Head{Seq: read}, nil
		}
		return v.Finish()
	}()
	if ferr := w.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if ce := (*audit.ChainError)(nil); errors.As(err, &ce) {
		return head, fmt.Errorf("the audit trail is broken: %w", err)
	}
	return head, err
}

// parseAnchors reads every --anchor.
func parseAnchors(raw []string) ([]audit.Head, error) {
	var anchors []audit.Head
	for _, a := range raw {
		h, err := parseAnchor(a)
		if err != nil {
			return nil, err
		}
		anchors = append(anchors, h)
	}
	return anchors, nil
}

// exportLineError is a line of an export that is not an audit record.
type exportLineError struct {
	line int
	err  error
}

func (e *exportLineError) Error() string {
	return fmt.Sprintf("--from-file line %d: not an audit record: %v", e.line, e.err)
}

func (e *exportLineError) Unwrap() error { return e.err }
