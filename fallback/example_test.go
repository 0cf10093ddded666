package fallback_test

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
)

// A round trip through device memory on the host-memory NPU, with the
// counters showing what moved.
func Example() {
	npu, err := fallback.New(fallback.WithDevices(1), fallback.WithDeviceMemory(64<<20))
	if err != nil {
		panic(err)
	}
	defer npu.Close()

	// The current context belongs to the OS thread, as in ACL.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := npu.Init(""); err != nil {
		panic(err)
	}
	if err := npu.SetDevice(0); err != nil {
		panic(err)
	}

	in := []byte("hello, device")
	n := uintptr(len(in))
	dev, err := npu.Malloc(n, acl.MemMallocHugeFirst)
	if err != nil {
		panic(err)
	}
	out := make([]byte, n)
	_ = npu.Memcpy(dev, n, unsafe.Pointer(&in[0]), n, acl.MemcpyHostToDevice)
	_ = npu.Memcpy(unsafe.Pointer(&out[0]), n, dev, n, acl.MemcpyDeviceToHost)
	fmt.Println(string(out))

	// Misuse gets the device's error code, never a crash.
	err = npu.Memcpy(dev, n-1, unsafe.Pointer(&in[0]), n, acl.MemcpyHostToDevice) // count > destMax
	fmt.Println(acl.CodeOf(err))

	c := npu.Counters()
	fmt.Println("H2D", c.H2D.Copies, "D2H", c.D2H.Copies, "live", c.LiveBytes[0])

	// Whatever the program forgets is released, and reported, at finalize.
	_ = npu.Finalize()
	for _, l := range npu.Leaks() {
		fmt.Println("leaked:", l.Kind, l.Size, "bytes")
	}
	// Output:
	// hello, device
	// ACL_ERROR_RT_PARAM_INVALID
	// H2D 1 D2H 1 live 13
	// leaked: device memory 13 bytes
}

// Stream tasks run in order on the stream's goroutine. A failing task
// (here an injected fault) is reported at synchronize. By default
// (ACL_CONTINUE_ON_FAILURE) the tasks after it run; after
// ACL_STOP_ON_FAILURE they are skipped and the error is sticky.
func ExampleNPU_FailTask() {
	npu, _ := fallback.New(fallback.WithDevices(1), fallback.WithDeviceMemory(1<<20))
	defer npu.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = npu.Init("")
	_ = npu.SetDevice(0)
	s, _ := npu.CreateStream()
	dev, _ := npu.Malloc(4, acl.MemMallocHugeFirst)

	out := make([]byte, 4)
	for _, mode := range []acl.StreamFailureMode{acl.ContinueOnFailure, acl.StopOnFailure} {
		_ = npu.SetStreamFailureMode(s, mode)
		npu.FailTask(2, 0) // the second task from now fails
		_ = npu.MemsetAsync(dev, 4, 7, 4, s)
		_ = npu.MemsetAsync(dev, 4, 8, 4, s) // fails
		_ = npu.MemsetAsync(dev, 4, 9, 4, s) // runs, or is skipped in stop mode
		fmt.Println(acl.CodeOf(npu.SynchronizeStream(s)), acl.CodeOf(npu.SynchronizeStream(s)))
		_ = npu.Memcpy(unsafe.Pointer(&out[0]), 4, dev, 4, acl.MemcpyDeviceToHost)
		fmt.Println(out)
	}
	_ = npu.DestroyStream(s)
	_ = npu.Free(dev)
	// Output:
	// ACL_ERROR_RT_TS_ERROR ACL_SUCCESS
	// [9 9 9 9]
	// ACL_ERROR_RT_TS_ERROR ACL_ERROR_RT_TS_ERROR
	// [7 7 7 7]
}

// Create a host-memory NPU with two devices of 1 GiB each; it implements
// acl.Backend, so the idiomatic layer (acl.Init) runs on it unchanged.
func ExampleNew() {
	npu, err := fallback.New(fallback.WithDevices(2), fallback.WithDeviceMemory(1<<30))
	if err != nil {
		panic(err)
	}
	defer npu.Close()
	if err := npu.Init(""); err != nil {
		panic(err)
	}
	n, err := npu.GetDeviceCount()
	if err != nil {
		panic(err)
	}
	fmt.Println("devices:", n)
	if err := npu.Finalize(); err != nil {
		panic(err)
	}
	// Output:
	// devices: 2
}
