//go:build !unix

package ge_test

import "time"

// processCPU is not available here: the benchmarks use the wall clock.
func processCPU() (time.Duration, bool) { return 0, false }
