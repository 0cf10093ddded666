//go:build unix

package ge_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time all of the process's threads have used:
// unlike the wall clock, it does not grow while other processes hold the
// CPUs.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
