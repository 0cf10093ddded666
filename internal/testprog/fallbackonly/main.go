// Command fallbackonly uses the AscendCL API over the fallback only; the
// tests build it with CGO_ENABLED=0 and check that it is statically linked.
package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ok")
}

func run() error {
	// The current context belongs to the OS thread, as in ACL.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b, err := fallback.New()
	if err != nil {
		return err
	}
	defer b.Close()
	if err := b.Init(""); err != nil {
		return err
	}
	defer b.Finalize()
	if err := b.SetDevice(0); err != nil {
		return err
	}
	dev, err := b.Malloc(4096, acl.MemMallocHugeFirst)
	if err != nil {
		return err
	}
	defer b.Free(dev)
	in := bytes.Repeat([]byte("npu!"), 1024)
	out := make([]byte, len(in))
	if err := b.Memcpy(dev, 4096, unsafe.Pointer(&in[0]), uintptr(len(in)), acl.MemcpyHostToDevice); err != nil {
		return err
	}
	if err := b.Memcpy(unsafe.Pointer(&out[0]), uintptr(len(out)), dev, uintptr(len(out)), acl.MemcpyDeviceToHost); err != nil {
		return err
	}
	if !bytes.Equal(in, out) {
		return fmt.Errorf("round trip differs")
	}
	return nil
}
