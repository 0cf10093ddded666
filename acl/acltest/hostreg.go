package acltest

import (
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

const pageSize = 4096

// pages maps n anonymous 4 KiB pages: page-aligned host memory outside the
// Go heap, for registration. It is unmapped at the end of the test.
func pages(t *testing.T, n int) []byte {
	t.Helper()
	p, err := unix.Mmap(-1, 0, n*pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	require.NoError(t, err, "mmap")
	t.Cleanup(func() { _ = unix.Munmap(p) })
	return p
}

// hostRegister: registration of host memory for device access.
func (s *suite) hostRegister(t *testing.T) {
	t.Run("RegisterUnregister", func(t *testing.T) {
		s.bind(t)
		mem := pages(t, 4)
		p := hostPtr(mem)
		var dp unsafe.Pointer
		ok(t, "HostRegister", func() error {
			var err error
			dp, err = s.b.HostRegister(p, uint64(len(mem)), acl.HostRegisterMapped)
			return err
		})
		assert.NotNil(t, dp, "device pointer of registered memory")
		ok(t, "HostUnregister", func() error { return s.b.HostUnregister(p) })
		// Memory not registered → 507911 (api_impl.cc:2636-2641).
		expect(t, acl.CodeHostMemoryNotRegistered, "HostUnregister twice", func() error { return s.b.HostUnregister(p) })
		// Registered again after unregistering.
		ok(t, "HostRegister again", func() error {
			_, err := s.b.HostRegister(p, uint64(len(mem)), acl.HostRegisterMapped)
			return err
		})
		ok(t, "HostUnregister", func() error { return s.b.HostUnregister(p) })
	})
	t.Run("Overlap", func(t *testing.T) {
		s.bind(t)
		mem := pages(t, 8)
		base := hostPtr(mem)
		ok(t, "HostRegister pages 2-5", func() error {
			_, err := s.b.HostRegister(unsafe.Add(base, 2*pageSize), 4*pageSize, acl.HostRegisterMapped)
			return err
		})
		for _, c := range []struct {
			name        string
			first, npag int
		}{{"same range", 2, 4}, {"inside", 3, 1}, {"overlapping the start", 0, 3}, {"overlapping the end", 5, 3}, {"around", 0, 8}} {
			p, size := unsafe.Add(base, c.first*pageSize), uint64(c.npag*pageSize)
			// Overlapping a registered range → 507910 (src/runtime/core/src/common/register_memory.cc:61-75).
			expect(t, acl.CodeHostMemoryAlreadyRegistered, "HostRegister: "+c.name, func() error {
				_, err := s.b.HostRegister(p, size, acl.HostRegisterMapped)
				return err
			})
			expect(t, acl.CodeHostMemoryAlreadyRegistered, "HostRegisterV2: "+c.name, func() error {
				return s.b.HostRegisterV2(p, size, acl.HostRegMapped)
			})
		}
		ok(t, "HostRegister the free pages around", func() error {
			if _, err := s.b.HostRegister(base, 2*pageSize, acl.HostRegisterMapped); err != nil {
				return err
			}
			return s.b.HostRegisterV2(unsafe.Add(base, 6*pageSize), 2*pageSize, acl.HostRegMapped)
		})
		for _, first := range []int{0, 2, 6} {
			ok(t, "HostUnregister", func() error { return s.b.HostUnregister(unsafe.Add(base, first*pageSize)) })
		}
	})
	t.Run("BadArgs", func(t *testing.T) {
		s.bind(t)
		mem := pages(t, 2)
		p := hostPtr(mem)
		// ACL-layer NULL check → 100000 (log_inner.h:452; memory.cpp:492-516).
		expect(t, acl.CodeInvalidParam, "HostRegister(NULL)", func() error {
			_, err := s.b.HostRegister(nil, pageSize, acl.HostRegisterMapped)
			return err
		})
		expect(t, acl.CodeInvalidParam, "HostRegisterV2(NULL)", func() error {
			return s.b.HostRegisterV2(nil, pageSize, acl.HostRegMapped)
		})
		// The driver's check (not in the public source): 107000 here.
		expect(t, acl.CodeRTParamInvalid, "HostRegister(not 4 KiB aligned)", func() error {
			_, err := s.b.HostRegister(unsafe.Add(p, 8), pageSize, acl.HostRegisterMapped)
			return err
		})
		expect(t, acl.CodeInvalidParam, "HostUnregister(NULL)", func() error { return s.b.HostUnregister(nil) })
		expect(t, acl.CodeHostMemoryNotRegistered, "HostUnregister(never registered)", func() error { return s.b.HostUnregister(p) })
		// hicann/runtime src/runtime/api/impl/api_impl.cc:2653-2666 → 107000.
		expect(t, acl.CodeRTParamInvalid, "HostGetDevicePointer(never registered)", func() error {
			_, err := s.b.HostGetDevicePointer(p, 0)
			return err
		})
		expect(t, acl.CodeInvalidParam, "HostGetDevicePointer(NULL)", func() error {
			_, err := s.b.HostGetDevicePointer(nil, 0)
			return err
		})
		ok(t, "HostRegisterV2", func() error { return s.b.HostRegisterV2(p, uint64(len(mem)), acl.HostRegMapped) })
		expect(t, acl.CodeInvalidParam, "HostGetDevicePointer(flag 1)", func() error {
			_, err := s.b.HostGetDevicePointer(p, 1)
			return err
		})
		ok(t, "HostUnregister", func() error { return s.b.HostUnregister(p) })
	})
	t.Run("V2DevicePointer", func(t *testing.T) {
		s.bind(t)
		mem := pages(t, 2)
		p := hostPtr(mem)
		ok(t, "HostRegisterV2", func() error { return s.b.HostRegisterV2(p, uint64(len(mem)), acl.HostRegMapped) })
		var dp unsafe.Pointer
		ok(t, "HostGetDevicePointer", func() error {
			var err error
			dp, err = s.b.HostGetDevicePointer(p, 0)
			return err
		})
		assert.NotNil(t, dp)
		ok(t, "HostUnregister", func() error { return s.b.HostUnregister(p) })
		// Memory not registered → 107000 (api_impl.cc:2653-2666).
		expect(t, acl.CodeRTParamInvalid, "HostGetDevicePointer after unregister", func() error {
			_, err := s.b.HostGetDevicePointer(p, 0)
			return err
		})
	})
	t.Run("AsyncCopies", func(t *testing.T) {
		// Registered memory is not plain host memory: asynchronous copies
		// may read and write it.
		s.bind(t)
		st := s.newStream(t)
		const np = 4
		mem := pages(t, np)
		n := len(mem)
		p := hostPtr(mem)
		_, err := s.b.HostRegister(p, uint64(n), acl.HostRegisterMapped)
		require.NoError(t, err)
		defer func() { assert.NoError(t, s.b.HostUnregister(p)) }()
		want := s.randBytes(n)
		copy(mem, want)
		d := s.devMem(t, n)
		ok(t, "MemcpyAsync H2D from registered memory", func() error {
			return s.b.MemcpyAsync(d, uintptr(n), p, uintptr(n), acl.MemcpyHostToDevice, st)
		})
		ok(t, "SynchronizeStream", func() error { return s.b.SynchronizeStream(st) })
		clear(mem)
		ok(t, "MemcpyAsync D2H to registered memory", func() error {
			return s.b.MemcpyAsync(p, uintptr(n), d, uintptr(n), acl.MemcpyDeviceToHost, st)
		})
		ok(t, "SynchronizeStream", func() error { return s.b.SynchronizeStream(st) })
		assert.Equal(t, want, mem)
	})
}
