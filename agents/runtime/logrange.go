package runtime

import (
	"fmt"
	"io"
)

// A container's log, as StreamLogs reads it, is one byte sequence: the
// records the runtime stored, stdout's and stderr's interleaved in the
// order it stored them, each record's bytes followed by a newline when it
// ended a line (a partial record, such as output not ended by a newline,
// adds nothing). Lines written to both streams at nearly the same time may
// be stored in either order, but once stored the sequence never changes:
// every read of it gives the same bytes, so a byte offset names the same
// byte for every reader, and a reader that resumes at an offset neither
// misses nor repeats a byte.

// LogRange selects the part of a container's log StreamLogs writes.
type LogRange struct {
	// Offset is the offset of the first byte to write; 0: from the start.
	// An offset past the end writes nothing (or waits, with Follow).
	Offset int64
	// Limit stops after that many bytes; 0: no limit.
	Limit int64
	// Follow keeps writing what the container writes until it has exited
	// and all of its log is written (or Limit is reached, or ctx ends).
	Follow bool
}

// Validate reports a negative offset or limit; each matches ErrInvalid.
func (r LogRange) Validate() error {
	if r.Offset < 0 {
		return fmt.Errorf("%w: log offset %d is negative", ErrInvalid, r.Offset)
	}
	if r.Limit < 0 {
		return fmt.Errorf("%w: log limit %d is negative", ErrInvalid, r.Limit)
	}
	return nil
}

// LogRead is what a StreamLogs wrote.
type LogRead struct {
	// Start is the offset of the first byte written: the range's offset,
	// or later when the bytes from there are no longer kept.
	Start int64
	// Next is the offset after the last byte written: where the next read
	// resumes.
	Next int64
	// Complete tells that the container had exited before the read and the
	// read reached the end of its log: no byte will ever follow Next.
	Complete bool
}

// RangeWriter passes on to w the bytes of a log that fall in a LogRange:
// it is given the log's bytes in order, from offset base on, and writes
// those from the range's offset, at most its limit. The adapters and the
// agent's archive share it, so every source cuts a range the same way.
type RangeWriter struct {
	w     io.Writer
	limit int64 // 0: none
	pos   int64 // offset of the next byte given
	start int64 // offset of the first byte to write
	wrote int64
}

// NewRangeWriter returns a writer of r's bytes to w, given a log from
// offset base on (0: the whole log). When base is past r.Offset the bytes
// before base are lost: writing starts at base.
func NewRangeWriter(w io.Writer, r LogRange, base int64) *RangeWriter {
	rw := &RangeWriter{w: w, limit: r.Limit, pos: base, start: max(r.Offset, base)}
	if s, ok := w.(StartNoter); ok {
		s.NoteLogStart(rw.start)
	}
	return rw
}

// Write takes the next bytes of the log and writes those in the range;
// it reports all of p taken unless w fails.
func (rw *RangeWriter) Write(p []byte) (int, error) {
	lo := max(rw.start-rw.pos, 0)
	hi := int64(len(p))
	if rw.limit > 0 {
		hi = min(hi, rw.start+rw.limit-rw.pos)
	}
	rw.pos += int64(len(p))
	if lo >= hi {
		return len(p), nil
	}
	n, err := rw.w.Write(p[lo:hi])
	rw.wrote += int64(n)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Full tells that the range's limit was written: what follows is dropped.
func (rw *RangeWriter) Full() bool { return rw.limit > 0 && rw.wrote >= rw.limit }

// Result reports what was written; ended tells that the log had ended
// before its bytes were given (the container had exited), so Complete is
// set when they were all written. A range cut by its limit is never
// complete: the writer cannot tell whether more would have followed.
func (rw *RangeWriter) Result(ended bool) LogRead {
	next := rw.start + rw.wrote
	return LogRead{Start: rw.start, Next: next, Complete: ended && next >= rw.pos && !rw.Full()}
}

// StartNoter is a writer that is told the log offset of its first byte
// (LogRead.Start) as soon as it is known, once the log was found: an
// HTTP answer that sends it in a header, before the body. A RangeWriter
// tells its writer when it is made; a reader may make several, and only
// the first call counts.
type StartNoter interface {
	NoteLogStart(start int64)
}
