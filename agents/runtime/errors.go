package runtime

import "errors"

// Sentinel errors for errors.Is. Adapters wrap them together with the
// driver's own error, so the cause stays visible in the message and to
// errors.As.
var (
	// ErrNotFound: no such container (or not one Cairn manages), or no such
	// image, locally or in its registry.
	ErrNotFound = errors.New("runtime: not found")
	// ErrUnavailable: the container runtime cannot be reached; try again
	// later.
	ErrUnavailable = errors.New("runtime: unavailable")
	// ErrInvalid: the request was refused before anything was created,
	// because the spec or an argument is malformed.
	ErrInvalid = errors.New("runtime: invalid")
)
