package osthread

import "golang.org/x/sys/unix"

// Yield gives the CPU to another runnable OS thread (sched_yield(2))
// without giving up the goroutine's scheduler slot (P). A goroutine locked
// to its OS thread that polls with runtime.Gosched instead pays two thread
// hand-offs per poll (the runtime parks the locked thread, hands its P to
// another thread, and wakes the locked thread again to resume it); Yield
// costs one system call. It helps only while the other parties of the
// wait hold a P of their own.
func Yield() { _, _, _ = unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
