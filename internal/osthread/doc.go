// Package osthread names the calling OS thread without a system call.
//
// ACL keeps its current context per OS thread, so the fallback looks the
// thread up at every runtime call. gettid(2) costs about a microsecond on a
// virtual machine, which was half of a small model's synchronous run. The Go
// runtime already records each thread's id: minit stores gettid() in
// m.procid when the thread starts (runtime/os_linux.go). ID reads it through
// the current goroutine's g.m, at offsets this package verifies against
// gettid at start-up on several threads; if they ever disagree (a future Go
// release moved the fields) ID falls back to the system call.
package osthread
