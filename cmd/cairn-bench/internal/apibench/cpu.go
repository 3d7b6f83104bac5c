package apibench

import (
	"os"
	"strings"
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used so
// far; 0 when the system cannot tell.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// LoadAverage is the machine's 1, 5 and 15 minute load averages as
// /proc/loadavg shows them ("" where there is none): the benchmark shares
// the machine, and the report says how busy it was.
func LoadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
