package acltest

import (
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copy: synchronous and asynchronous copies and memsets, their data and
// their argument checks.
func (s *suite) copy(t *testing.T) {
	t.Run("RoundTrip", func(t *testing.T) {
		// H2D → D2D → D2H at random offsets; the bytes come back intact and
		// the bytes around the copied ranges stay as they were.
		s.bind(t)
		for range 16 {
			n := 1 + s.rng.IntN(64<<10)
			offA, offB := s.rng.IntN(4096), s.rng.IntN(4096)
			sizeA, sizeB := offA+n+s.rng.IntN(512), offB+n+s.rng.IntN(512)
			a, b := s.devMem(t, sizeA), s.devMem(t, sizeB)
			ok(t, "Memset", func() error { return s.b.Memset(b, uintptr(sizeB), 0xee, uintptr(sizeB)) })
			want := s.randBytes(n)
			ok(t, "Memcpy H2D", func() error {
				return s.b.Memcpy(unsafe.Add(a, offA), uintptr(sizeA-offA), hostPtr(want), uintptr(n), acl.MemcpyHostToDevice)
			})
			ok(t, "Memcpy D2D", func() error {
				return s.b.Memcpy(unsafe.Add(b, offB), uintptr(sizeB-offB), unsafe.Add(a, offA), uintptr(n), acl.MemcpyDeviceToDevice)
			})
			got := make([]byte, sizeB)
			ok(t, "Memcpy D2H", func() error {
				return s.b.Memcpy(hostPtr(got), uintptr(sizeB), b, uintptr(sizeB), acl.MemcpyDeviceToHost)
			})
			require.Equal(t, fill(offB, 0xee), got[:offB], "bytes before the copy")
			require.Equal(t, want, got[offB:offB+n], "copied bytes")
			require.Equal(t, fill(sizeB-offB-n, 0xee), got[offB+n:], "bytes after the copy")
		}
	})
	t.Run("HostToHost", func(t *testing.T) {
		s.bind(t)
		n := 1 + s.rng.IntN(4096)
		src, dst := s.randBytes(n), make([]byte, n)
		ok(t, "Memcpy H2H", func() error {
			return s.b.Memcpy(hostPtr(dst), uintptr(n), hostPtr(src), uintptr(n), acl.MemcpyHostToHost)
		})
		assert.Equal(t, src, dst)
	})
	t.Run("AsyncRoundTrip", func(t *testing.T) {
		s.bind(t)
		st := s.newStream(t)
		for range 8 {
			n := 1 + s.rng.IntN(64<<10)
			off := s.rng.IntN(1024)
			in, out := s.pinned(t, n), s.pinned(t, n)
			want := s.randBytes(n)
			copy(in, want)
			a, b := s.devMem(t, off+n), s.devMem(t, n)
			ok(t, "MemcpyAsync H2D", func() error {
				return s.b.MemcpyAsync(unsafe.Add(a, off), uintptr(n), hostPtr(in), uintptr(n), acl.MemcpyHostToDevice, st)
			})
			ok(t, "MemcpyAsync D2D", func() error {
				return s.b.MemcpyAsync(b, uintptr(n), unsafe.Add(a, off), uintptr(n), acl.MemcpyDeviceToDevice, st)
			})
			ok(t, "MemcpyAsync D2H", func() error {
				return s.b.MemcpyAsync(hostPtr(out), uintptr(n), b, uintptr(n), acl.MemcpyDeviceToHost, st)
			})
			ok(t, "SynchronizeStream", func() error { return s.b.SynchronizeStream(st) })
			require.Equal(t, want, out)
		}
	})
	t.Run("BadArgs", func(t *testing.T) {
		// Codes of hicann/runtime @681ef76: the ACL layer checks NULL
		// pointers and translates kinds (src/acl/aclrt_impl/memory.cpp:
		// 658-664, 162-199: INNER/INTER_DEVICE_TO_DEVICE are refused), the
		// runtime checks count against destMax (src/runtime/api/impl/
		// api_error.cc:2138, 2184).
		s.bind(t)
		st := s.newStream(t)
		const n = 512
		d := s.devMem(t, n)
		h := hostPtr(s.pinned(t, n))
		both := func(name string, want acl.Code, dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind acl.MemcpyKind) {
			expect(t, want, "Memcpy: "+name, func() error { return s.b.Memcpy(dst, destMax, src, count, kind) })
			expect(t, want, "MemcpyAsync: "+name, func() error { return s.b.MemcpyAsync(dst, destMax, src, count, kind, st) })
		}
		both("NULL dst", acl.CodeInvalidParam, nil, n, h, n, acl.MemcpyHostToDevice)
		both("NULL src", acl.CodeInvalidParam, d, n, nil, n, acl.MemcpyHostToDevice)
		both("destMax < count", acl.CodeRTParamInvalid, d, n-1, h, n, acl.MemcpyHostToDevice)
		both("destMax < count (D2H)", acl.CodeRTParamInvalid, h, 1, d, n, acl.MemcpyDeviceToHost)
		for _, k := range []acl.MemcpyKind{-1, 8, 99, acl.MemcpyInnerDeviceToDevice, acl.MemcpyInterDeviceToDevice} {
			// Kinds outside the ACL translation table → 100000 (src/acl/aclrt_impl/memory.cpp:162-199).
			both("kind the ACL layer does not translate", acl.CodeInvalidParam, d, n, h, n, k)
		}
		// Count 0 returns before any check (memory.cpp:653, 688).
		ok(t, "Memcpy(count 0, NULL, undefined kind)", func() error { return s.b.Memcpy(nil, 0, nil, 0, 99) })
		ok(t, "MemcpyAsync(count 0, NULL, undefined kind)", func() error { return s.b.MemcpyAsync(nil, 0, nil, 0, 99, st) })
	})
	t.Run("WrongKind", func(t *testing.T) {
		// A synchronous copy goes by where the pointers live, whatever the
		// kind (api_error.cc:2129-2152); an asynchronous one has its kind
		// corrected (api_error.cc:2694-2786) and, when it ends up host to
		// host, is ACL_ERROR_RT_FEATURE_NOT_SUPPORT (api_error.cc:2246).
		s.bind(t)
		st := s.newStream(t)
		const n = 512
		d1, d2 := s.devMem(t, n), s.devMem(t, n)
		p1, p2 := s.pinned(t, n), s.pinned(t, n)
		h1, h2 := hostPtr(p1), hostPtr(p2)
		put := func(p unsafe.Pointer, b []byte) {
			ok(t, "Memcpy(DEFAULT) staging", func() error { return s.b.Memcpy(p, n, hostPtr(b), n, acl.MemcpyDefault) })
		}
		get := func(p unsafe.Pointer) []byte {
			b := make([]byte, n)
			ok(t, "Memcpy(DEFAULT) reading", func() error { return s.b.Memcpy(hostPtr(b), n, p, n, acl.MemcpyDefault) })
			return b
		}
		for _, c := range []struct {
			name     string
			dst, src unsafe.Pointer
			kind     acl.MemcpyKind
			hostOnly bool
		}{
			{"HOST_TO_DEVICE from device", d1, d2, acl.MemcpyHostToDevice, false},
			{"HOST_TO_DEVICE to host", h1, h2, acl.MemcpyHostToDevice, true},
			{"DEVICE_TO_HOST from host", h1, h2, acl.MemcpyDeviceToHost, true},
			{"DEVICE_TO_HOST to device", d1, d2, acl.MemcpyDeviceToHost, false},
			{"DEVICE_TO_DEVICE from host", d1, h1, acl.MemcpyDeviceToDevice, false},
			{"DEVICE_TO_DEVICE to host", h1, d1, acl.MemcpyDeviceToDevice, false},
			{"HOST_TO_HOST with device", h1, d1, acl.MemcpyHostToHost, false},
		} {
			want := s.randBytes(n)
			put(c.src, want)
			ok(t, "Memcpy: "+c.name, func() error { return s.b.Memcpy(c.dst, n, c.src, n, c.kind) })
			require.Equal(t, want, get(c.dst), "Memcpy: %s copies by the placements", c.name)
			want = s.randBytes(n)
			put(c.src, want)
			if c.hostOnly {
				expect(t, acl.CodeRTFeatureNotSupport, "MemcpyAsync: "+c.name, func() error { return s.b.MemcpyAsync(c.dst, n, c.src, n, c.kind, st) })
				continue
			}
			ok(t, "MemcpyAsync: "+c.name, func() error { return s.b.MemcpyAsync(c.dst, n, c.src, n, c.kind, st) })
			ok(t, "SynchronizeStream", func() error { return s.b.SynchronizeStream(st) })
			require.Equal(t, want, get(c.dst), "MemcpyAsync: %s copies with the corrected kind", c.name)
		}
	})
	t.Run("OutOfRange", func(t *testing.T) {
		s.bind(t)
		st := s.newStream(t)
		const n = 4096
		d, d2 := s.devMem(t, n), s.devMem(t, 2*n)
		host := s.pinned(t, 2*n)
		h := hostPtr(host)
		// A range past its allocation: the driver's invalid value → 107000 (not settled; errcode_manage.cc:38).
		expect(t, acl.CodeRTParamInvalid, "Memcpy H2D running past the allocation", func() error {
			return s.b.Memcpy(unsafe.Add(d, n/2), n, h, n, acl.MemcpyHostToDevice)
		})
		expect(t, acl.CodeRTParamInvalid, "Memcpy D2H running past the allocation", func() error {
			return s.b.Memcpy(h, 2*n, d, 2*n, acl.MemcpyDeviceToHost)
		})
		expect(t, acl.CodeRTParamInvalid, "Memcpy D2D source running past the allocation", func() error {
			return s.b.Memcpy(d2, 2*n, d, 2*n, acl.MemcpyDeviceToDevice)
		})
		expect(t, acl.CodeRTParamInvalid, "MemcpyAsync H2D running past the allocation", func() error {
			return s.b.MemcpyAsync(unsafe.Add(d, n-1), n, h, 2, acl.MemcpyHostToDevice, st)
		})
		freed, err := s.b.Malloc(n, acl.MemMallocHugeFirst)
		require.NoError(t, err)
		require.NoError(t, s.b.Free(freed))
		expect(t, acl.CodeRTParamInvalid, "Memcpy D2H from freed memory", func() error {
			return s.b.Memcpy(h, n, freed, n, acl.MemcpyDeviceToHost)
		})
		expect(t, acl.CodeRTParamInvalid, "Memcpy H2D to freed memory", func() error {
			return s.b.Memcpy(freed, n, h, n, acl.MemcpyHostToDevice)
		})
		// Freed memory: the driver's invalid value → 107000 (not settled; errcode_manage.cc:38).
		expect(t, acl.CodeRTParamInvalid, "MemcpyAsync D2D from freed memory", func() error {
			return s.b.MemcpyAsync(d, n, freed, n, acl.MemcpyDeviceToDevice, st)
		})
	})
	t.Run("AsyncPlainHost", func(t *testing.T) {
		// An asynchronous copy touching pageable host memory becomes a
		// stream synchronize plus a synchronous copy (hicann/runtime
		// src/runtime/api/impl/api_error.cc:2256-2269, 2789-2803): the
		// bytes have moved when the call returns.
		s.bind(t)
		st := s.newStream(t)
		const n = 512
		d := s.devMem(t, n)
		plain := s.randBytes(n)
		want := append([]byte(nil), plain...)
		ok(t, "MemcpyAsync H2D from plain host memory", func() error {
			return s.b.MemcpyAsync(d, n, hostPtr(plain), n, acl.MemcpyHostToDevice, st)
		})
		copy(plain, s.randBytes(n)) // too late to change what was copied
		back := make([]byte, n)
		ok(t, "MemcpyAsync D2H to plain host memory", func() error {
			return s.b.MemcpyAsync(hostPtr(back), n, d, n, acl.MemcpyDeviceToHost, st)
		})
		require.Equal(t, want, back, "read before any synchronize")
		ok(t, "SynchronizeStream", func() error { return s.b.SynchronizeStream(st) })
		// Host to host asynchronously: RT_ERROR_FEATURE_NOT_SUPPORT → 207000 (api_error.cc:2246-2248).
		expect(t, acl.CodeRTFeatureNotSupport, "MemcpyAsync H2H between plain host buffers", func() error {
			return s.b.MemcpyAsync(hostPtr(back), n, hostPtr(plain), n, acl.MemcpyHostToHost, st)
		})
	})
	t.Run("Memset", func(t *testing.T) {
		// Memset of the first k bytes leaves the rest alone.
		s.bind(t)
		st := s.newStream(t)
		for _, async := range []bool{false, true} {
			n := 2 + s.rng.IntN(16<<10)
			k := 1 + s.rng.IntN(n-1)
			v := byte(s.rng.Uint32())
			d := s.devMem(t, n)
			want := s.randBytes(n)
			ok(t, "Memcpy H2D", func() error { return s.b.Memcpy(d, uintptr(n), hostPtr(want), uintptr(n), acl.MemcpyHostToDevice) })
			if async {
				ok(t, "MemsetAsync", func() error { return s.b.MemsetAsync(d, uintptr(n), int32(v), uintptr(k), st) })
				ok(t, "SynchronizeStream", func() error { return s.b.SynchronizeStream(st) })
			} else {
				ok(t, "Memset", func() error { return s.b.Memset(d, uintptr(n), int32(v), uintptr(k)) })
			}
			copy(want, fill(k, v))
			got := make([]byte, n)
			ok(t, "Memcpy D2H", func() error { return s.b.Memcpy(hostPtr(got), uintptr(n), d, uintptr(n), acl.MemcpyDeviceToHost) })
			require.Equal(t, want, got, "async=%v n=%d k=%d", async, n, k)
		}
	})
	t.Run("MemsetBadArgs", func(t *testing.T) {
		s.bind(t)
		st := s.newStream(t)
		const n = 512
		d := s.devMem(t, n)
		pinned := hostPtr(s.pinned(t, n))
		plain := hostPtr(make([]byte, n))
		freed, err := s.b.Malloc(n, acl.MemMallocHugeFirst)
		require.NoError(t, err)
		require.NoError(t, s.b.Free(freed))
		both := func(name string, want acl.Code, p unsafe.Pointer, maxCount, count uintptr) {
			expect(t, want, "Memset: "+name, func() error { return s.b.Memset(p, maxCount, 0, count) })
			expect(t, want, "MemsetAsync: "+name, func() error { return s.b.MemsetAsync(p, maxCount, 0, count, st) })
		}
		// NULL pointers with a count → 100000 (log_inner.h:452; memory.cpp:653-742 check the count first).
		both("NULL", acl.CodeInvalidParam, nil, n, n)
		// count > maxCount: hicann/runtime src/runtime/api/impl/api_error.cc:3134.
		both("maxCount < count", acl.CodeRTParamInvalid, d, n-1, n)
		both("past the allocation", acl.CodeRTParamInvalid, unsafe.Add(d, 1), n, n)
		both("freed memory", acl.CodeRTParamInvalid, freed, n, n)
		// Count 0 returns before the NULL check (memory.cpp:674, 742).
		ok(t, "Memset(NULL, count 0)", func() error { return s.b.Memset(nil, 0, 0, 0) })
		ok(t, "MemsetAsync(NULL, count 0)", func() error { return s.b.MemsetAsync(nil, 0, 0, 0, st) })
		// aclrtMallocHost memory may be set (documentation 11-03).
		ok(t, "Memset: pinned host memory", func() error { return s.b.Memset(pinned, n, 7, n) })
		ok(t, "MemsetAsync: pinned host memory", func() error { return s.b.MemsetAsync(pinned, n, 7, n, st) })
		ok(t, "SynchronizeStream", func() error { return s.b.SynchronizeStream(st) })
		// Plain host memory is undefined in the documentation and the
		// public source does not settle the code: both backends refuse it
		// with ACL_ERROR_RT_INVALID_MEMORY_TYPE.
		both("plain host memory", acl.CodeRTInvalidMemoryType, plain, n, n)
	})
}
