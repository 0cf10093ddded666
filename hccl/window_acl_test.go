package hccl_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// TestWindowOnDeviceBuffers: two ranks open windows over acl device
// buffers; rank 0 reads 4096 random rows of rank 1's window into a device
// buffer (16 BatchGets of at most 256 descriptors) and closes that buffer
// at once: Close waits for the queued reads, so the stream does not fail.
// A second read is compared with rank 1's table byte for byte.
func TestWindowOnDeviceBuffers(t *testing.T) {
	const n, rows, rb = 2, 4096, 64
	w := newWorld(t, n, hcclsim.Options{})
	comms := w.join(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(rand.Uint64(), 9))
	table := make([]byte, rows*rb)
	for i := range table {
		table[i] = byte(rng.Uint32())
	}
	idx := make([]int, rows)
	for i := range idx {
		idx[i] = rng.IntN(rows)
	}
	errs := make([]error, n)
	var got []byte
	var wg sync.WaitGroup
	var opened, read sync.WaitGroup
	opened.Add(n)
	read.Add(1)
	for r := range n {
		wg.Go(func() {
			errs[r] = func() error {
				c := comms[r]
				mem, err := w.devs[r].Malloc(rows*rb, acl.MemMallocHugeFirst)
				if err != nil {
					return err
				}
				if r == 1 {
					if err := mem.CopyFromHost(table); err != nil {
						return err
					}
				}
				win, err := c.OpenWindowMemory(ctx, mem)
				opened.Done()
				if err != nil {
					return err
				}
				opened.Wait()
				if r == 1 {
					read.Wait()
					if err := win.Close(); err != nil {
						return err
					}
					return mem.Close()
				}
				defer read.Done()
				// Own rank: HCCL refuses a one-sided batch to itself.
				err = win.Get(ctx, 0, []hccl.Transfer{{Local: mem.Ptr(), Offset: 0, Count: 8, DataType: hccl.Uint8}})
				assert.Equal(t, hccl.EPara, hccl.ResultOf(err), "Window.Get from the own rank: %v", err)
				reads := func(dst acl.Memory) []hccl.Transfer {
					ts := make([]hccl.Transfer, rows)
					for i, k := range idx {
						ts[i] = hccl.Transfer{Local: unsafe.Add(dst.Ptr(), i*rb), Offset: uint64(k * rb), Count: rb, DataType: hccl.Uint8}
					}
					return ts
				}
				first, err := w.devs[0].Malloc(rows*rb, acl.MemMallocHugeFirst)
				if err != nil {
					return err
				}
				if err := win.GetMem(ctx, 1, first, reads(first)); err != nil {
					return err
				}
				if err := first.Close(); err != nil {
					return err
				}
				if err := c.Wait(ctx); err != nil {
					return err
				}
				dst, err := w.devs[0].Malloc(rows*rb, acl.MemMallocHugeFirst)
				if err != nil {
					return err
				}
				defer dst.Close()
				ts := reads(dst)
				ts[7].Local = mem.Ptr() // not inside dst
				err = win.GetMem(ctx, 1, dst, ts)
				assert.Equal(t, hccl.EPara, hccl.ResultOf(err), "a read outside the local memory: %v", err)
				if err := win.GetMem(ctx, 1, dst, reads(dst)); err != nil {
					return err
				}
				if err := c.Wait(ctx); err != nil {
					return err
				}
				got = make([]byte, rows*rb)
				if err := dst.CopyToHost(got); err != nil {
					return err
				}
				if err := win.Close(); err != nil {
					return err
				}
				return mem.Close()
			}()
		})
	}
	wg.Wait()
	for r := range n {
		require.NoError(t, errs[r], "rank %d", r)
	}
	for i, k := range idx {
		require.Equal(t, table[k*rb:(k+1)*rb], got[i*rb:(i+1)*rb], "row %d (table row %d)", i, k)
	}
}
