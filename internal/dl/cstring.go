package dl

import "unsafe"

// MaxCString bounds the scan of a C string, against a missing terminator.
const MaxCString = 1 << 16

// GoString copies the NUL-terminated C string at p ("" for NULL), reading
// at most MaxCString bytes. p is memory C owns (static storage or a
// library buffer), never the Go heap.
func GoString(p uintptr) string {
	if p == 0 {
		return ""
	}
	ptr := PtrOf(p)
	n := 0
	for n < MaxCString && *(*byte)(unsafe.Add(ptr, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(ptr), n))
}

// PtrOf turns an address returned by C into a pointer. The address is
// never in the Go heap, so the GC ignores it.
func PtrOf(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// CString returns s as a NUL-terminated byte slice; ok is false when s
// holds a NUL (C would see a shorter string), which each binding reports
// with its own library's parameter-error code.
func CString(s string) (b []byte, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return nil, false
		}
	}
	b = make([]byte, len(s)+1)
	copy(b, s)
	return b, true
}
