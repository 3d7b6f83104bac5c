package config

import (
	"fmt"

	"github.com/docker/go-units"
)

// Bytes is a size in bytes as a flag value: "10GiB", "512MiB", "64g",
// "1.5TiB" or a plain number of bytes; units are binary (k = 1024), as
// docker's and podman's size flags read them.
type Bytes int64

// Set parses a size.
func (b *Bytes) Set(s string) error {
	n, err := units.RAMInBytes(s)
	if err != nil {
		return fmt.Errorf("size %q: want a number of bytes with an optional unit, e.g. 10GiB, 512MiB, 0", s)
	}
	if n < 0 {
		return fmt.Errorf("size %q: must not be negative", s)
	}
	*b = Bytes(n)
	return nil
}

// String prints the size with a binary unit ("10GiB"), or "0".
func (b *Bytes) String() string {
	if *b == 0 {
		return "0"
	}
	return units.BytesSize(float64(*b))
}

// Type names the flag's value type in --help.
func (b *Bytes) Type() string { return "size" }
