package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/auditarchive"
)

// verifyExport verifies the NDJSON export o.export names ("-": stdin)
// after the archives of o.archives, against o's anchors and signed heads,
// and returns its head.
func verifyExport(o auditReplayOptions, stdin io.Reader) (audit.Head, error) {
	if !o.verify {
		return audit.Head{}, errors.New("--export verifies: it needs --verify")
	}
	var anchors []audit.Head
	for _, a := range o.anchors {
		h, err := parseAnchor(a)
		if err != nil {
			return audit.Head{}, err
		}
		anchors = append(anchors, h)
	}
	signed, err := o.signedAnchors()
	if err != nil {
		return audit.Head{}, err
	}
	in := stdin
	if o.export != "-" {
		f, err := os.Open(o.export)
		if err != nil {
			return audit.Head{}, fmt.Errorf("--export: %w", err)
		}
		defer f.Close()
		in = f
	}
	v := audit.NewVerifier(audit.Genesis, append(anchors, signed...)...)
	fail := func(err error) (audit.Head, error) {
		var ce *audit.ChainError
		if errors.As(err, &ce) {
			return v.Head(), fmt.Errorf("the audit trail is broken: %w", err)
		}
		return v.Head(), err
	}
	for _, dir := range o.archives {
		for r, err := range auditarchive.Records(dir) {
			if err == nil {
				err = v.Add(r.Record)
			}
			if err != nil {
				return fail(err)
			}
		}
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), domain.AuditPayloadBytes)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		line, err := audit.ParseLine(sc.Bytes())
		if err != nil {
			return fail(fmt.Errorf("--export line %d: %w", n, err))
		}
		if line.Elided != nil {
			err = v.AddElided(*line.Elided)
		} else {
			err = v.Add(line.Record)
		}
		if err != nil {
			return fail(err)
		}
	}
	if err := sc.Err(); err != nil {
		return fail(fmt.Errorf("--export: %w", err))
	}
	head, err := v.Finish()
	if err != nil {
		return fail(err)
	}
	return head, nil
}
