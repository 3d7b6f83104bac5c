package readapi

import "io"

// A kernel's log is one byte sequence: the records its container's
// runtime stored, stdout's and stderr's interleaved in the order it stored
// them (Podman's conmon), each record's bytes followed by a newline when
// it ended a line. Once stored it never changes, so a byte offset names
// the same byte for every reader, and the download is those bytes.

// LogRange selects bytes of a kernel's log by offset.
type LogRange struct {
	// Offset is the offset of the first byte; 0: the start.
	Offset int64
	// Limit stops after that many bytes; 0: no limit.
	Limit int64
	// Follow keeps the stream open for what the kernel writes until it
	// has ended and its whole log was sent.
	Follow bool
}

// LogStream is an open read of a kernel's log range: Read gives its bytes
// until io.EOF (or an error that ended it early), then End tells where it
// ended.
type LogStream interface {
	io.ReadCloser
	// Start is the log offset of the first byte Read gives: the range's
	// offset, or later when the bytes from there are no longer kept.
	Start() int64
	// End, once Read returned io.EOF, is the offset after the last byte
	// and whether the log is complete there (the kernel ended and no byte
	// will follow).
	End() (next int64, complete bool)
}
