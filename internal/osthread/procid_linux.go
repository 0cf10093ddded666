//go:build linux && (amd64 || arm64) && !go1.27

package osthread

import "unsafe"

const haveProcid = true

// curG returns the current goroutine's g (procid_linux_*.s).
func curG() unsafe.Pointer

// procid reads g.m.procid; 0 when a pointer on the way is nil.
func procid() int {
	g := curG()
	if g == nil {
		return 0
	}
	m := *(*unsafe.Pointer)(unsafe.Add(g, offGM))
	if m == nil {
		return 0
	}
	return int(*(*uint64)(unsafe.Add(m, offMProcid)))
}
