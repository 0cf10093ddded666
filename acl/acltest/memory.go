package acltest

import (
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// devMem allocates n bytes of device memory freed at the end of the test.
func (s *suite) devMem(t *testing.T, n int) unsafe.Pointer {
	t.Helper()
	p, err := s.b.Malloc(uintptr(n), acl.MemMallocHugeFirst)
	require.NoError(t, err, "Malloc(%d)", n)
	require.NotNil(t, p)
	t.Cleanup(func() { _ = s.b.Free(p) })
	return p
}

// pinned allocates n bytes of pinned host memory freed at the end of the
// test and returns them as a slice.
func (s *suite) pinned(t *testing.T, n int) []byte {
	t.Helper()
	p, err := s.b.MallocHost(uintptr(n))
	require.NoError(t, err, "MallocHost(%d)", n)
	require.NotNil(t, p)
	t.Cleanup(func() { _ = s.b.FreeHost(p) })
	return unsafe.Slice((*byte)(p), n)
}

// memAttr returns the memory kind the device allocates from: HBM where the
// backend reports any, else DDR.
func (s *suite) memAttr(t *testing.T) acl.MemAttr {
	t.Helper()
	for _, a := range []acl.MemAttr{acl.HBMMem, acl.DDRMem} {
		if _, total, err := s.b.GetMemInfo(a); err == nil && total > 0 {
			return a
		}
	}
	t.Fatal("GetMemInfo reports no HBM and no DDR memory")
	return 0
}

// memory: allocation, freeing and memory information.
func (s *suite) memory(t *testing.T) {
	t.Run("MallocFree", func(t *testing.T) {
		s.bind(t)
		for _, pol := range []acl.MemMallocPolicy{
			acl.MemMallocHugeFirst, acl.MemMallocHugeOnly, acl.MemMallocNormalOnly,
			acl.MemMallocHugeFirst | acl.MemTypeHighBandWidth,
		} {
			n := uintptr(1 + s.rng.IntN(1<<20))
			var p unsafe.Pointer
			ok(t, "Malloc", func() error {
				var err error
				p, err = s.b.Malloc(n, pol)
				return err
			})
			require.NotNil(t, p)
			ok(t, "Free", func() error { return s.b.Free(p) })
		}
	})
	t.Run("MallocBadArgs", func(t *testing.T) {
		s.bind(t)
		// Size 0 → 100000 (src/acl/aclrt_impl/memory.cpp:315).
		expect(t, acl.CodeInvalidParam, "Malloc(0)", func() error { _, err := s.b.Malloc(0, acl.MemMallocHugeFirst); return err })
		// An undefined policy is accepted: the ACL layer falls back to
		// the default flags (hicann/runtime src/acl/aclrt_impl/memory.cpp:320-339).
		for _, pol := range []acl.MemMallocPolicy{8, 0x42, 0xff} {
			var p unsafe.Pointer
			ok(t, "Malloc(undefined policy)", func() error { var err error; p, err = s.b.Malloc(64, pol); return err })
			ok(t, "Free", func() error { return s.b.Free(p) })
		}
		expect(t, acl.CodeInvalidParam, "MallocHost(0)", func() error { _, err := s.b.MallocHost(0); return err })
	})
	t.Run("OutOfMemory", func(t *testing.T) {
		s.bind(t)
		_, most, err := s.b.GetMemInfo(s.memAttr(t))
		require.NoError(t, err)
		expect(t, acl.CodeRTMemoryAllocation, "Malloc(more than the device has)", func() error {
			p, err := s.b.Malloc(most+64<<20, acl.MemMallocHugeFirst)
			if err == nil {
				_ = s.b.Free(p)
			}
			return err
		})
		// The device is still usable.
		s.devMem(t, 4096)
	})
	t.Run("FreeBadPointer", func(t *testing.T) {
		s.bind(t)
		var word [16]byte
		// NULL → 100000 (log_inner.h:452); a pointer that is not a live allocation start is the driver's invalid value → 107000 (not settled; errcode_manage.cc:38).
		expect(t, acl.CodeInvalidParam, "Free(NULL)", func() error { return s.b.Free(nil) })
		expect(t, acl.CodeRTParamInvalid, "Free(host pointer)", func() error { return s.b.Free(unsafe.Pointer(&word[0])) })
		p, err := s.b.Malloc(4096, acl.MemMallocHugeFirst)
		require.NoError(t, err)
		expect(t, acl.CodeRTParamInvalid, "Free(interior pointer)", func() error { return s.b.Free(unsafe.Add(p, 64)) })
		ok(t, "Free", func() error { return s.b.Free(p) })
		s.undefined(t, "double free", func(t *testing.T) {
			expect(t, acl.CodeRTParamInvalid, "Free twice", func() error { return s.b.Free(p) })
		})
	})
	t.Run("FreeHostBadPointer", func(t *testing.T) {
		s.bind(t)
		// NULL → 100000 (log_inner.h:452).
		expect(t, acl.CodeInvalidParam, "FreeHost(NULL)", func() error { return s.b.FreeHost(nil) })
		p, err := s.b.MallocHost(4096)
		require.NoError(t, err)
		ok(t, "FreeHost", func() error { return s.b.FreeHost(p) })
		s.undefined(t, "double free", func(t *testing.T) {
			err := try(t, "FreeHost twice", func() error { return s.b.FreeHost(p) })
			assert.ErrorIs(t, err, acl.ErrInvalidParam, "FreeHost twice")
		})
	})
	t.Run("MallocHostUsable", func(t *testing.T) {
		s.bind(t)
		n := 1 + s.rng.IntN(1<<16)
		h := s.pinned(t, n)
		want := s.randBytes(n)
		copy(h, want)
		assert.Equal(t, want, h)
	})
	t.Run("Distinct", func(t *testing.T) {
		// Live allocations never overlap: each keeps its own bytes.
		s.bind(t)
		const k = 16
		ptrs := make([]unsafe.Pointer, k)
		sizes := make([]int, k)
		for i := range k {
			sizes[i] = 1 + s.rng.IntN(8192)
			ptrs[i] = s.devMem(t, sizes[i])
			ok(t, "Memset", func() error { return s.b.Memset(ptrs[i], uintptr(sizes[i]), int32(i+1), uintptr(sizes[i])) })
		}
		for i := range k {
			got := make([]byte, sizes[i])
			ok(t, "Memcpy D2H", func() error {
				return s.b.Memcpy(hostPtr(got), uintptr(sizes[i]), ptrs[i], uintptr(sizes[i]), acl.MemcpyDeviceToHost)
			})
			require.Equal(t, fill(sizes[i], byte(i+1)), got, "allocation %d", i)
		}
	})
	t.Run("GetMemInfo", func(t *testing.T) {
		s.bind(t)
		for a := acl.DDRMem; a <= acl.MemP2PHuge1G; a++ {
			var free, total uintptr
			ok(t, "GetMemInfo", func() error {
				var err error
				free, total, err = s.b.GetMemInfo(a)
				return err
			})
			assert.LessOrEqual(t, free, total, "attr %d", a)
		}
		for _, a := range []acl.MemAttr{-1, acl.MemP2PHuge1G + 1, 1000} {
			// hicann/runtime src/runtime/api/impl/api_error.cc:3184-3187
			expect(t, acl.CodeRTInvalidMemoryType, "GetMemInfo(undefined attr)", func() error {
				_, _, err := s.b.GetMemInfo(a)
				return err
			})
		}
	})
	t.Run("GetMemInfoTracksMalloc", func(t *testing.T) {
		s.bind(t)
		attr := s.memAttr(t)
		free0, _, err := s.b.GetMemInfo(attr)
		require.NoError(t, err)
		n := min(uintptr(64<<20), free0/4)
		s.devMem(t, int(n))
		free1, _, err := s.b.GetMemInfo(attr)
		require.NoError(t, err)
		assert.LessOrEqual(t, free1, free0-n, "free memory after allocating %d bytes", n)
	})
}
