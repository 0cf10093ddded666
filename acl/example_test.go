package acl_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"golang.org/x/sys/unix"
)

// Open a runtime on the host-memory NPU, open a device and round-trip
// bytes through device memory. On hardware, pass the native backend
// instead of fallback.New().
func ExampleInit() {
	npu, err := fallback.New()
	if err != nil {
		log.Fatal(err)
	}
	rt, err := acl.Init(npu, "")
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close() // closes the devices still open, then aclFinalize

	n, err := rt.DeviceCount()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("devices:", n > 0)

	dev, err := rt.OpenDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()

	buf, err := dev.Malloc(5, acl.MemMallocHugeFirst)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	if err := buf.CopyFromHost([]byte("hello")); err != nil {
		log.Fatal(err)
	}
	out := make([]byte, 5)
	if err := buf.CopyToHost(out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// devices: true
	// hello
}

// Queue copies on a stream from pinned host memory and wait for them with a
// deadline.
func ExampleStream_Wait() {
	npu, _ := fallback.New()
	rt, err := acl.Init(npu, "")
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	dev, err := rt.OpenDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	st, err := dev.NewStream()
	if err != nil {
		log.Fatal(err)
	}
	in, _ := dev.MallocHost(4)
	out, _ := dev.MallocHost(4)
	buf, _ := dev.Malloc(4, acl.MemMallocHugeFirst)
	copy(in.Bytes(), []byte{1, 2, 3, 4})

	// All three run in order when the stream reaches them.
	_ = buf.CopyFromHostAsync(in, st)
	_ = buf.MemsetAsync(9, st)
	_ = buf.CopyToHostAsync(out, st)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.Wait(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Bytes())
	// Output: [9 9 9 9]
}

// Order work across two streams with an event, and time it.
func ExampleEvent() {
	npu, _ := fallback.New()
	rt, _ := acl.Init(npu, "")
	defer rt.Close()
	dev, _ := rt.OpenDevice(0)
	producer, _ := dev.NewStream()
	consumer, _ := dev.NewStream()
	start, _ := dev.NewEvent(acl.EventTimeLine)
	done, _ := dev.NewEvent(acl.EventSync | acl.EventTimeLine) // a stream may wait only for ACL_EVENT_SYNC events
	buf, _ := dev.Malloc(1<<20, acl.MemMallocHugeFirst)
	out, _ := dev.MallocHost(1 << 20)

	_ = start.Record(producer)
	_ = buf.MemsetAsync(7, producer)
	_ = done.Record(producer)
	_ = consumer.WaitEvent(done) // the consumer starts after the memset
	_ = buf.CopyToHostAsync(out, consumer)
	if err := consumer.Synchronize(); err != nil {
		log.Fatal(err)
	}
	took, err := done.Elapsed(start)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Bytes()[1<<20-1], took >= 0)
	// Output: 7 true
}

// Use a Device from any goroutine: each call binds the device's context to
// the OS thread it runs on. Do batches raw backend calls under one bind.
func ExampleDevice_Do() {
	npu, _ := fallback.New()
	rt, _ := acl.Init(npu, "")
	defer rt.Close()
	dev, _ := rt.OpenDevice(0)

	b := rt.Backend()
	err := dev.Do(func() error {
		p, err := b.Malloc(64, acl.MemMallocHugeFirst)
		if err != nil {
			return err
		}
		if err := b.Memset(p, 64, 1, 64); err != nil {
			return err
		}
		return b.Free(p)
	})
	fmt.Println(err)
	// Output: <nil>
}

// Methods of a closed handle fail with ACL_ERROR_RT_INVALID_HANDLE naming
// the method.
func ExampleDeviceBuffer_Close() {
	npu, _ := fallback.New()
	rt, _ := acl.Init(npu, "")
	defer rt.Close()
	dev, _ := rt.OpenDevice(0)
	buf, _ := dev.Malloc(16, acl.MemMallocHugeFirst)
	_ = buf.Close()
	fmt.Println(buf.Close()) // idempotent
	fmt.Println(buf.Memset(0))
	// Output:
	// <nil>
	// DeviceBuffer.Memset: ACL_ERROR_RT_INVALID_HANDLE (107017): device buffer is closed
}

// Register host memory that lives outside the Go heap (here an anonymous
// mapping, 4 KiB aligned) so that the device can use it, and get its
// device-side address.
func ExampleDevice_RegisterHost() {
	npu, _ := fallback.New()
	rt, _ := acl.Init(npu, "")
	defer rt.Close()
	dev, _ := rt.OpenDevice(0)

	mem, err := unix.Mmap(-1, 0, 1<<16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		log.Fatal(err)
	}
	defer unix.Munmap(mem)
	reg, err := dev.RegisterHost(mem, acl.HostRegisterMapped)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reg.DevicePtr() != nil, reg.Size())
	_, err = dev.RegisterHost(mem, acl.HostRegisterMapped) // already registered
	fmt.Println(acl.CodeOf(err))
	fmt.Println(reg.Close())
	// Output:
	// true 65536
	// ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
	// <nil>
}

// Open a device: aclrtSetDevice plus a context of the Device's own. The
// Device's methods may be called from any goroutine.
func ExampleRuntime_OpenDevice() {
	npu, err := fallback.New(fallback.WithDevices(2))
	if err != nil {
		log.Fatal(err)
	}
	rt, err := acl.Init(npu, "")
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	dev, err := rt.OpenDevice(1)
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	fmt.Println("device", dev.ID())
	_, err = rt.OpenDevice(2)
	fmt.Println(acl.CodeOf(err))
	// Output:
	// device 1
	// ACL_ERROR_RT_INVALID_DEVICEID
}
