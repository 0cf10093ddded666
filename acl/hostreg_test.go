package acl_test

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
)

// alignedIn returns the first page-aligned n bytes of a fresh Go-heap slice.
func alignedIn(n int) []byte {
	b := make([]byte, n+acl.HostRegisterAlign)
	off := (acl.HostRegisterAlign - int(uintptr(unsafe.Pointer(&b[0]))%acl.HostRegisterAlign)) % acl.HostRegisterAlign
	return b[off : off+n]
}

// TestRegisterHostAlignment: an address off a 4 KiB page is refused by the
// idiomatic layer itself (Op names the Go method, not the C function), for
// the slice and the pointer form, before the backend sees it.
func TestRegisterHostAlignment(t *testing.T) {
	_, _, d := open(t)
	b := alignedIn(2 * acl.HostRegisterAlign)
	for _, off := range []int{1, 8, 512, acl.HostRegisterAlign - 1} {
		_, err := d.RegisterHost(b[off:], acl.HostRegisterMapped)
		require.Error(t, err)
		assert.Equal(t, acl.CodeRTParamInvalid, acl.CodeOf(err))
		assert.Equal(t, "Device.RegisterHost", err.(*acl.Error).Op)
		_, err = d.RegisterHostPointer(unsafe.Pointer(&b[off]), 64, acl.HostRegisterMapped)
		assert.Equal(t, acl.CodeRTParamInvalid, acl.CodeOf(err))
		assert.Equal(t, "Device.RegisterHostPointer", err.(*acl.Error).Op)
	}
}

// TestRegisterHostGoHeap: a page-aligned slice of the Go heap is accepted
// and pinned: with no reference left but the registration, garbage
// collections and a churn of same-sized allocations do not reuse its
// memory, so the device keeps seeing the bytes it was given; Close
// unregisters and unpins.
func TestRegisterHostGoHeap(t *testing.T) {
	_, _, d := open(t)
	const n = 3 * acl.HostRegisterAlign
	want := make([]byte, n)
	for i := range want {
		want[i] = byte(rand.Uint32())
	}
	b := alignedIn(n)
	copy(b, want)
	reg, err := d.RegisterHost(b, acl.HostRegisterMapped)
	require.NoError(t, err)
	b = nil // only the registration refers to the memory now
	_ = b
	var sink [][]byte
	for range 20 {
		runtime.GC()
		for range 64 {
			x := make([]byte, n+acl.HostRegisterAlign)
			for i := range x {
				x[i] = 0xA5
			}
			sink = append(sink, x)
		}
		sink = sink[len(sink)/2:]
	}
	got := unsafe.Slice((*byte)(reg.HostPtr()), n)
	require.Equal(t, want, got, "registered Go memory was reused while registered")
	require.NoError(t, reg.Close())
	require.NoError(t, reg.Close())
	runtime.KeepAlive(sink)
}
