package native_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ascend-go/cann/acl"
)

func TestInfoCalls(t *testing.T) {
	s := initStub(t)
	n, err := s.GetDeviceCount()
	require.NoError(t, err)
	assert.Equal(t, uint32(2), n)
	m, err := s.GetRunMode()
	require.NoError(t, err)
	assert.Equal(t, acl.RunModeHost, m)
	major, minor, patch, err := s.GetVersion()
	require.NoError(t, err)
	assert.Equal(t, [3]int32{1, 15, 0}, [3]int32{major, minor, patch})
	assert.Equal(t, "AscendStub", s.GetSocName())
}

func TestConfigure(t *testing.T) {
	s := openStub(t)
	require.NoError(t, s.code("stub_configure", 3, 1<<20))
	t.Cleanup(func() { s.ccall("stub_configure", 2, 256<<20) })
	require.NoError(t, s.Init(""))
	n, err := s.GetDeviceCount()
	require.NoError(t, err)
	assert.Equal(t, uint32(3), n)
	runtime.LockOSThread()
	require.NoError(t, s.SetDevice(2))
	d, err := s.GetDevice()
	require.NoError(t, err)
	assert.Equal(t, int32(2), d)
	free, total, err := s.GetMemInfo(acl.HBMMem)
	require.NoError(t, err)
	assert.Equal(t, uintptr(1<<20), total)
	assert.Equal(t, total, free)
	p, err := s.Malloc(1000, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	free, _, err = s.GetMemInfo(acl.HBMMem)
	require.NoError(t, err)
	assert.Equal(t, uintptr(1<<20-1024), free, "1000 bytes are charged as two 512-byte units")
	require.NoError(t, s.Free(p))
	require.NoError(t, s.ResetDevice(2))
}

// TestErrorFields checks Op, Code and the message read from
// aclGetRecentErrMsg, and that the message is consumed by the binding.
func TestErrorFields(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	_, err := s.Malloc(0, acl.MemMallocHugeFirst)
	var e *acl.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "aclrtMalloc", e.Op)
	assert.Equal(t, acl.CodeInvalidParam, e.Code)
	assert.Equal(t, "[stub] aclrtMalloc: size is 0", e.Msg)
	assert.Equal(t, "aclrtMalloc: ACL_ERROR_INVALID_PARAM (100000): [stub] aclrtMalloc: size is 0", err.Error())
	assert.Empty(t, s.GetRecentErrMsg(), "ACL reports each message once; the binding took it")

	// A direct failure of the C library, read back through the method.
	require.Equal(t, int32(acl.CodeInvalidParam), int32(s.ccall("aclrtSetCurrentContext", 0)))
	assert.Equal(t, "[stub] aclrtSetCurrentContext: context is NULL", s.GetRecentErrMsg())
	assert.Empty(t, s.GetRecentErrMsg())
}

// TestErrorMessagePerThread fails calls with distinct messages from many
// goroutines at once: each error must carry the text of its own failure,
// which holds only if the message is read on the failing call's thread.
func TestErrorMessagePerThread(t *testing.T) {
	s := initStub(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				id := int32(-(g*1000 + i + 1))
				err := s.SetDevice(id)
				if !assert.Error(t, err) {
					return
				}
				want := fmt.Sprintf("device id %d out of range", id)
				if !assert.Contains(t, err.Error(), want) {
					return
				}
				if i%16 == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
}

// TestOneFFICallPerMethod counts the C calls each method makes: one on
// success, two on failure (the call and aclGetRecentErrMsg).
func TestOneFFICallPerMethod(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	st, err := s.CreateStream()
	require.NoError(t, err)
	ev, err := s.CreateEvent()
	require.NoError(t, err)
	dev, err := s.Malloc(4096, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	host, err := s.MallocHost(4096)
	require.NoError(t, err)
	mem := pages(t, 1)
	mp := unsafe.Pointer(&mem[0])

	calls := []struct {
		name string
		f    func() error
	}{
		{"GetDevice", func() error { _, err := s.GetDevice(); return err }},
		{"GetDeviceCount", func() error { _, err := s.GetDeviceCount(); return err }},
		{"GetRunMode", func() error { _, err := s.GetRunMode(); return err }},
		{"GetCurrentContext", func() error { _, err := s.GetCurrentContext(); return err }},
		{"MemcpyAsync", func() error { return s.MemcpyAsync(dev, 4096, host, 4096, acl.MemcpyHostToDevice, st) }},
		{"Memcpy", func() error { return s.Memcpy(host, 4096, dev, 4096, acl.MemcpyDeviceToHost) }},
		{"Memset", func() error { return s.Memset(dev, 4096, 1, 4096) }},
		{"MemsetAsync", func() error { return s.MemsetAsync(dev, 4096, 1, 4096, st) }},
		{"RecordEvent", func() error { return s.RecordEvent(ev, st) }},
		{"StreamWaitEvent", func() error { return s.StreamWaitEvent(st, ev) }},
		{"SynchronizeEvent", func() error { return s.SynchronizeEvent(ev) }},
		{"SynchronizeStream", func() error { return s.SynchronizeStream(st) }},
		{"SynchronizeStreamWithTimeout", func() error { return s.SynchronizeStreamWithTimeout(st, 5) }},
		{"EventElapsedTime", func() error { _, err := s.EventElapsedTime(ev, ev); return err }},
		{"GetMemInfo", func() error { _, _, err := s.GetMemInfo(acl.HBMMem); return err }},
		{"GetVersion", func() error { _, _, _, err := s.GetVersion(); return err }},
		{"HostRegisterV2", func() error { return s.HostRegisterV2(mp, 4096, acl.HostRegMapped) }},
		{"HostGetDevicePointer", func() error { _, err := s.HostGetDevicePointer(mp, 0); return err }},
		{"HostUnregister", func() error { return s.HostUnregister(mp) }},
	}
	for _, c := range calls {
		before := s.calls()
		require.NoError(t, c.f(), c.name)
		assert.Equal(t, uint64(1), s.calls()-before, "%s: C calls on success", c.name)
	}
	before := s.calls()
	require.Error(t, s.Free(nil))
	assert.Equal(t, uint64(2), s.calls()-before, "C calls on failure")

	require.NoError(t, s.DestroyEvent(ev))
	require.NoError(t, s.DestroyStream(st))
	require.NoError(t, s.Free(dev))
	require.NoError(t, s.FreeHost(host))
	require.NoError(t, s.ResetDevice(0))
	assert.Empty(t, s.live())
	assert.Empty(t, s.leaks())
}

// TestLeakAccounting: resources a reset or finalize releases for the
// program are counted, those the program released are not.
func TestLeakAccounting(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	ctx, err := s.CreateContext(0)
	require.NoError(t, err)
	_, err = s.CreateStream()
	require.NoError(t, err)
	_, err = s.CreateEvent()
	require.NoError(t, err)
	require.NoError(t, s.DestroyContext(ctx))
	assert.Equal(t, []string{"1 stream(s)", "1 event(s)"}, s.leaks(), "DestroyContext released its stream and event")

	require.NoError(t, s.SetDevice(0))
	_, err = s.CreateContext(0)
	require.NoError(t, err)
	_, err = s.Malloc(100, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	p, err := s.Malloc(100, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	require.NoError(t, s.Free(p))
	_, err = s.MallocHost(100)
	require.NoError(t, err)
	require.NoError(t, s.ResetDevice(0))
	require.NoError(t, s.ResetDevice(0))
	assert.Equal(t, []string{"1 device allocation(s)", "1 stream(s)", "1 event(s)", "1 context(s)"}, s.leaks())
	assert.Equal(t, []string{"1 MallocHost block(s)"}, s.live(), "a reset keeps host memory")
	require.NoError(t, s.Finalize())
	assert.Equal(t, []string{"1 device allocation(s)", "1 MallocHost block(s)", "1 stream(s)", "1 event(s)", "1 context(s)"}, s.leaks())
	assert.Empty(t, s.live())
}

// TestFailCallInjection: the k-th call fails with the injected code and
// has no other effect.
func TestFailCallInjection(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	s.failCall(2, acl.CodeRTDeviceOOM)
	require.NoError(t, s.SetDevice(0))
	_, err := s.Malloc(64, acl.MemMallocHugeFirst)
	assert.ErrorIs(t, err, acl.ErrBadAlloc)
	assert.Equal(t, acl.CodeRTDeviceOOM, acl.CodeOf(err))
	assert.Contains(t, err.Error(), "injected")
	p, err := s.Malloc(64, acl.MemMallocHugeFirst)
	require.NoError(t, err, "only one call fails")
	require.NoError(t, s.Free(p))
	require.NoError(t, s.ResetDevice(0))
	require.NoError(t, s.ResetDevice(0))
}

// TestRoundTripRandom moves random bytes host → device → device → host
// through every copy path and compares them with the source.
func TestRoundTripRandom(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	st, err := s.CreateStream()
	require.NoError(t, err)
	for range 32 {
		n := 1 + rng.IntN(256<<10)
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(rng.Uint32())
		}
		a, err := s.Malloc(uintptr(n), acl.MemMallocNormalOnly)
		require.NoError(t, err)
		b, err := s.Malloc(uintptr(n), acl.MemMallocHugeOnly|acl.MemTypeHighBandWidth)
		require.NoError(t, err)
		pin, err := s.MallocHost(uintptr(n))
		require.NoError(t, err)
		pinned := unsafe.Slice((*byte)(pin), n)

		require.NoError(t, s.Memcpy(a, uintptr(n), unsafe.Pointer(&want[0]), uintptr(n), acl.MemcpyHostToDevice))
		require.NoError(t, s.MemcpyAsync(b, uintptr(n), a, uintptr(n), acl.MemcpyDeviceToDevice, st))
		require.NoError(t, s.MemcpyAsync(pin, uintptr(n), b, uintptr(n), acl.MemcpyDefault, st))
		require.NoError(t, s.SynchronizeStream(st))
		require.Equal(t, want, pinned)

		got := make([]byte, n)
		require.NoError(t, s.Memcpy(unsafe.Pointer(&got[0]), uintptr(n), b, uintptr(n), acl.MemcpyDeviceToHost))
		require.Equal(t, want, got)
		for _, p := range []unsafe.Pointer{a, b} {
			require.NoError(t, s.Free(p))
		}
		require.NoError(t, s.FreeHost(pin))
	}
	require.NoError(t, s.DestroyStream(st))
	require.NoError(t, s.ResetDevice(0))
}

// TestRegisteredDevicePointer: the device address of registered memory is
// a distinct address that copies translate to the host bytes.
func TestRegisteredDevicePointer(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	mem := pages(t, 2)
	for i := range mem {
		mem[i] = byte(i * 7)
	}
	p := unsafe.Pointer(&mem[0])
	dp, err := s.HostRegister(p, uint64(len(mem)), acl.HostRegisterMapped)
	require.NoError(t, err)
	assert.NotEqual(t, p, dp)
	dp2, err := s.HostGetDevicePointer(unsafe.Add(p, 100), 0)
	require.NoError(t, err)
	assert.Equal(t, unsafe.Add(dp, 100), dp2)
	got := make([]byte, 1000)
	require.NoError(t, s.Memcpy(unsafe.Pointer(&got[0]), 1000, dp2, 1000, acl.MemcpyDeviceToHost))
	assert.Equal(t, mem[100:1100], got)
	require.NoError(t, s.HostUnregister(p))
	require.NoError(t, s.ResetDevice(0))
}

// TestElapsedTime checks the float result: the end event is reached only
// when the hold in front of it is released, after a measured sleep.
func TestElapsedTime(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	st, err := s.CreateStream()
	require.NoError(t, err)
	start, err := s.CreateEventWithFlag(acl.EventTimeLine)
	require.NoError(t, err)
	end, err := s.CreateEventWithFlag(acl.EventTimeLine | acl.EventSync)
	require.NoError(t, err)
	require.NoError(t, s.RecordEvent(start, st))
	release, err := s.hold(st)
	require.NoError(t, err)
	require.NoError(t, s.RecordEvent(end, st))
	t0 := time.Now()
	time.Sleep(30 * time.Millisecond)
	slept := time.Since(t0)
	release()
	require.NoError(t, s.SynchronizeEvent(end))
	ms, err := s.EventElapsedTime(start, end)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, float64(ms), float64(slept.Milliseconds())-1, "elapsed %v ms, slept %v", ms, slept)
	_, err = s.CreateEventWithFlag(0x40)
	assert.ErrorIs(t, err, acl.ErrInvalidParam)
	require.NoError(t, s.DestroyEvent(start))
	require.NoError(t, s.DestroyEvent(end))
	require.NoError(t, s.DestroyStream(st))
	require.NoError(t, s.ResetDevice(0))
}

// TestNegativeArguments: int32 arguments keep their sign across the ABI.
func TestNegativeArguments(t *testing.T) {
	s := initStub(t)
	err := s.SetDevice(-5)
	assert.ErrorContains(t, err, "device id -5 out of range")
	runtime.LockOSThread()
	require.NoError(t, s.SetDevice(0))
	st, err := s.CreateStream()
	require.NoError(t, err)
	err = s.SynchronizeStreamWithTimeout(st, -7)
	assert.ErrorContains(t, err, "timeout -7 < -1")
	require.NoError(t, s.SynchronizeStreamWithTimeout(st, -1))
	p, err := s.Malloc(64, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	require.NoError(t, s.Memset(p, 64, -1, 64), "value -1 sets 0xff bytes")
	got := make([]byte, 64)
	require.NoError(t, s.Memcpy(unsafe.Pointer(&got[0]), 64, p, 64, acl.MemcpyDeviceToHost))
	assert.Equal(t, strings.Repeat("\xff", 64), string(got))
	require.NoError(t, s.Free(p))
	require.NoError(t, s.DestroyStream(st))
	require.NoError(t, s.ResetDevice(0))
}

// TestConcurrentUse runs independent workloads on many locked goroutines
// at once (run with -race).
func TestConcurrentUse(t *testing.T) {
	s := initStub(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if !assert.NoError(t, s.SetDevice(int32(g%2))) {
				return
			}
			defer func() { assert.NoError(t, s.ResetDevice(int32(g%2))) }()
			st, err := s.CreateStream()
			if !assert.NoError(t, err) {
				return
			}
			defer func() { assert.NoError(t, s.DestroyStream(st)) }()
			rng := rand.New(rand.NewPCG(uint64(g), 2))
			for range 50 {
				n := 1 + rng.IntN(8192)
				d, err := s.Malloc(uintptr(n), acl.MemMallocHugeFirst)
				if !assert.NoError(t, err) {
					return
				}
				h, err := s.MallocHost(uintptr(n))
				if !assert.NoError(t, err) {
					return
				}
				src := unsafe.Slice((*byte)(h), n)
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				want := append([]byte(nil), src...)
				assert.NoError(t, s.MemcpyAsync(d, uintptr(n), h, uintptr(n), acl.MemcpyHostToDevice, st))
				// aclrtMallocHost memory may be set (documentation 11-03).
				assert.NoError(t, s.MemsetAsync(h, uintptr(n), 0, uintptr(n), st), "memset of pinned host memory")
				assert.NoError(t, s.SynchronizeStream(st))
				clear(src)
				assert.NoError(t, s.Memcpy(h, uintptr(n), d, uintptr(n), acl.MemcpyDeviceToHost))
				assert.Equal(t, want, src)
				assert.NoError(t, s.Free(d))
				assert.NoError(t, s.FreeHost(h))
			}
		})
	}
	wg.Wait()
	assert.Empty(t, s.live())
	assert.Empty(t, s.leaks())
}

// TestCallAllocations: the cheap calls and the asynchronous copy do not
// allocate.
func TestCallAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	s := initStub(t)
	s.bound(t)
	st, err := s.CreateStream()
	require.NoError(t, err)
	d, err := s.Malloc(64, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	h, err := s.MallocHost(64)
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(200, func() { _, _ = s.GetDevice() }), "GetDevice")
	assert.Zero(t, testing.AllocsPerRun(200, func() {
		_ = s.MemcpyAsync(d, 64, h, 64, acl.MemcpyHostToDevice, st)
	}), "MemcpyAsync")
	assert.Zero(t, testing.AllocsPerRun(200, func() { _, _, _ = s.GetMemInfo(acl.HBMMem) }), "GetMemInfo")
	require.NoError(t, s.SynchronizeStream(st))
	require.NoError(t, s.Free(d))
	require.NoError(t, s.FreeHost(h))
	require.NoError(t, s.DestroyStream(st))
	require.NoError(t, s.ResetDevice(0))
}

// pages maps n anonymous pages (page-aligned memory outside the Go heap)
// for registration; unmapped at the end of the test.
func pages(t *testing.T, n int) []byte {
	t.Helper()
	p, err := unix.Mmap(-1, 0, n*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Munmap(p) })
	return p
}

// TestRegisterDeviceMemory: device memory and device views cannot be
// registered as host memory.
func TestRegisterDeviceMemory(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	d, err := s.Malloc(8192, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	err = s.HostRegisterV2(d, 4096, acl.HostRegMapped)
	assert.Equal(t, acl.CodeRTInvalidMemoryType, acl.CodeOf(err))
	mem := pages(t, 1)
	dp, err := s.HostRegister(unsafe.Pointer(&mem[0]), 4096, acl.HostRegisterMapped)
	require.NoError(t, err)
	err = s.HostRegisterV2(dp, 4096, acl.HostRegMapped)
	assert.Equal(t, acl.CodeRTInvalidMemoryType, acl.CodeOf(err), "the device view of registered memory")
	require.NoError(t, s.HostUnregister(unsafe.Pointer(&mem[0])))
	require.NoError(t, s.Free(d))
	require.NoError(t, s.ResetDevice(0))
}

// TestFreeUnderQueuedTask: memory released while a queued task still uses
// it makes that task fail, sticky, instead of being touched.
func TestFreeUnderQueuedTask(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	st, err := s.CreateStream()
	require.NoError(t, err)
	d, err := s.Malloc(4096, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	h, err := s.MallocHost(4096)
	require.NoError(t, err)
	release, err := s.hold(st)
	require.NoError(t, err)
	require.NoError(t, s.MemcpyAsync(h, 4096, d, 4096, acl.MemcpyDeviceToHost, st))
	require.NoError(t, s.FreeHost(h))
	release()
	err = s.SynchronizeStream(st)
	assert.Equal(t, acl.CodeRTDeviceMemError, acl.CodeOf(err))
	// ACL_CONTINUE_ON_FAILURE: reported once (hicann/runtime
	// src/runtime/core/src/stream/stream.cc:1826-1828).
	assert.NoError(t, s.SynchronizeStream(st), "reported by one synchronize")
	require.NoError(t, s.DestroyStream(st))
	require.NoError(t, s.Free(d))
	require.NoError(t, s.ResetDevice(0))
}

// TestContextFirst: context-bound calls report a missing context before
// looking at their arguments.
func TestContextFirst(t *testing.T) {
	s := initStub(t)
	done := make(chan []acl.Code)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		ctx, err := s.CreateContext(0)
		if err == nil {
			err = s.DestroyContext(ctx)
		}
		if err != nil {
			done <- []acl.Code{acl.CodeOf(err)}
			return
		}
		_, e1 := s.Malloc(0, 99)
		e2 := s.Free(nil)
		e3 := s.Memcpy(nil, 0, nil, 1, 99) // count 0 would succeed before any check
		_, e4 := s.CreateEventWithFlag(0)
		e5 := s.SynchronizeStreamWithTimeout(0, -5)
		_, e6 := s.MallocHost(0)
		done <- []acl.Code{acl.CodeOf(e1), acl.CodeOf(e2), acl.CodeOf(e3), acl.CodeOf(e4), acl.CodeOf(e5), acl.CodeOf(e6)}
	}()
	for _, c := range <-done {
		assert.Equal(t, acl.CodeRTContextNull, c)
	}
}
