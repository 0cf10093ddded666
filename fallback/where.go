package fallback

import (
	"fmt"
	"runtime"
	"strings"
)

// where is the call stack of the call that created a resource, kept as
// program counters (cheap to capture) and turned into text only when a leak
// is reported.
type where [6]uintptr

// callers captures the stack above the exported method that called it.
func callers() (w where) {
	runtime.Callers(3, w[:])
	return w
}

// String names the first frame outside this package and outside the acl
// package's wrappers (test files excepted), i.e. the program's own call.
func (w *where) String() string {
	n := 0
	for n < len(w) && w[n] != 0 {
		n++
	}
	if n == 0 {
		return ""
	}
	frames := runtime.CallersFrames(w[:n])
	first := ""
	for {
		f, more := frames.Next()
		if first == "" {
			first = fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		if !internalFrame(f) {
			return fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		if !more {
			return first
		}
	}
}

const modulePath = "github.com/ascend-go/cann/"

func internalFrame(f runtime.Frame) bool {
	if strings.HasSuffix(f.File, "_test.go") {
		return false
	}
	fn := f.Function
	if strings.HasPrefix(fn, "runtime.") {
		return true
	}
	for _, pkg := range []string{"fallback.", "acl."} {
		if strings.HasPrefix(fn, modulePath+pkg) {
			return true
		}
	}
	return false
}
