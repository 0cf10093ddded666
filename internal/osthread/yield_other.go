//go:build !linux

package osthread

import "runtime"

// Yield gives the processor to other work; without sched_yield it is
// runtime.Gosched.
func Yield() { runtime.Gosched() }
