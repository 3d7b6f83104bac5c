package httpapi

import (
	"golang.org/x/sys/unix"
)

// Bounds of the connection limits derived from the open-files limit.
const (
	// reservedFiles is the least number of descriptors left to the rest
	// of the process (database, bus, NATS, storage, logs) by the default
	// connection limit; a quarter of the open-files limit if more.
	reservedFiles = 256
	// maxDefaultConns caps the default global limit (fasthttp's own
	// default concurrency) when the open-files limit is huge.
	maxDefaultConns = 256 * 1024
	// minDefaultConns is the least default global limit, however low the
	// open-files limit.
	minDefaultConns = 16
	// perIPShare: one client IP may hold at most 1/perIPShare of the
	// global limit by default.
	perIPShare = 8
)

// DefaultMaxConns is the default global connection limit: the process's
// open-files limit (RLIMIT_NOFILE, soft) less what the rest of the process
// needs (reservedFiles, or a quarter of the limit if more), so that a
// flood of connections is refused before it takes the descriptors the
// database and the bus need.
func DefaultMaxConns() int {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return minDefaultConns * perIPShare
	}
	return maxConnsFor(lim.Cur)
}

func maxConnsFor(nofile uint64) int {
	if nofile == unix.RLIM_INFINITY || nofile > maxDefaultConns*2 {
		return maxDefaultConns
	}
	n := int(nofile) - max(reservedFiles, int(nofile)/4)
	return min(max(n, minDefaultConns), maxDefaultConns)
}

// DefaultMaxConnsPerIP is the default limit of connections from one client
// IP address given the global limit: an eighth of it, at least 2.
func DefaultMaxConnsPerIP(maxConns int) int {
	return max(maxConns/perIPShare, 2)
}
