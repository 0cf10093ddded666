package hccl_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// world is n ranks on one fallback NPU: a Device and a Stream per rank
// and the HCCL model, all closed at the end of the test.
type world struct {
	sim  *hcclsim.Sim
	devs []*acl.Device
	strs []*acl.Stream
	root hccl.RootInfo
}

func newWorld(t *testing.T, n int, opts hcclsim.Options) *world {
	t.Helper()
	npu, err := fallback.New(fallback.WithDevices(n), fallback.WithDeviceMemory(64<<20))
	require.NoError(t, err)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	w := &world{sim: hcclsim.New(npu, opts)}
	t.Cleanup(func() {
		assert.NoError(t, w.sim.Close())
		assert.NoError(t, rt.Close())
	})
	for r := 0; r < n; r++ {
		d, err := rt.OpenDevice(int32(r))
		require.NoError(t, err)
		s, err := d.NewStream()
		require.NoError(t, err)
		w.devs, w.strs = append(w.devs, d), append(w.strs, s)
	}
	w.root, err = w.sim.GetRootInfo()
	require.NoError(t, err)
	return w
}

// join forms the communicator: every rank from its own goroutine (none
// locked to a thread: the Comm binds its device itself).
func (w *world) join(t *testing.T) []*hccl.Comm {
	t.Helper()
	n := len(w.devs)
	comms := make([]*hccl.Comm, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			comms[r], errs[r] = hccl.InitRootInfoContext(context.Background(), w.sim, &w.root, n, r, hccl.OnStream(w.strs[r]))
		})
	}
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
		t.Cleanup(func() { assert.NoError(t, comms[r].Close()) })
	}
	return comms
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// TestCommOnStreamAllReduce: three ranks driven by plain goroutines sum
// random vectors in acl device buffers; every rank gets the elementwise
// sum (integers in float32: exact in any order).
func TestCommOnStreamAllReduce(t *testing.T) {
	const n, count = 3, 4099
	w := newWorld(t, n, hcclsim.Options{})
	comms := w.join(t)
	in := make([][]float32, n)
	want := make([]float32, count)
	for r := range n {
		in[r] = make([]float32, count)
		for i := range in[r] {
			in[r][i] = float32(rand.IntN(2001) - 1000)
			want[i] += in[r][i]
		}
	}
	got := make([][]float32, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			errs[r] = func() error {
				send, err := w.devs[r].Malloc(4*count, acl.MemMallocHugeFirst)
				if err != nil {
					return err
				}
				defer send.Close()
				recv, err := w.devs[r].Malloc(4*count, acl.MemMallocHugeFirst)
				if err != nil {
					return err
				}
				defer recv.Close()
				if err := send.CopyFromHost(f32bytes(in[r])); err != nil {
					return err
				}
				if err := comms[r].AllReduceMem(context.Background(), send, recv, count, hccl.Float32, hccl.Sum); err != nil {
					return err
				}
				if err := comms[r].Wait(context.Background()); err != nil {
					return err
				}
				out := make([]byte, 4*count)
				if err := recv.CopyToHost(out); err != nil {
					return err
				}
				got[r] = bytesF32(out)
				return nil
			}()
		})
	}
	wg.Wait()
	for r := range n {
		require.NoError(t, errs[r], "rank %d", r)
		require.Equal(t, want, got[r], "rank %d", r)
	}
}

// TestCommContextEndsWaitForPeer: rank 1 never calls the AllReduce; rank
// 0's context deadline (200 ms) ends its wait before the 1.5 s execution
// timeout would, with an error that is both HCCL_E_TIMEOUT and
// context.DeadlineExceeded. The same for a barrier.
func TestCommContextEndsWaitForPeer(t *testing.T) {
	w := newWorld(t, 2, hcclsim.Options{ExecTimeout: 1500 * time.Millisecond, ConnectTimeout: 1500 * time.Millisecond})
	comms := w.join(t)
	buf, err := w.devs[0].Malloc(4096, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	for name, call := range map[string]func(ctx context.Context) error{
		"AllReduce": func(ctx context.Context) error {
			return comms[0].AllReduceMem(ctx, buf, buf, 1024, hccl.Float32, hccl.Sum)
		},
		"Barrier": func(ctx context.Context) error { return comms[0].Barrier(ctx) },
	} {
		const wait = 200 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		start := time.Now()
		err := call(ctx)
		if err == nil { // a backend that only queues: the wait is at synchronize
			err = comms[0].Wait(ctx)
		}
		late := time.Since(start) - wait
		cancel()
		t.Logf("%s: returned %v after the deadline: %v", name, late, err)
		require.Error(t, err, name)
		assert.ErrorIs(t, err, context.DeadlineExceeded, name)
		assert.ErrorIs(t, err, hccl.ErrTimeout, name)
		assert.Equal(t, hccl.ETimeout, hccl.ResultOf(err), name)
		assert.Less(t, late, time.Second, "%s: the context, not the 1.5 s timeouts (the first operation waits for peers up to the connect timeout), ended the wait", name)
		// The abandoned call ends in the backend (its own timeout)
		// before the next one starts.
		_ = comms[0].Wait(context.Background())
	}
	require.NoError(t, buf.Close(), "Close waits for the abandoned work")
}

// TestInitContextEndsWaitForPeer: only rank 0 of 2 joins; its context ends
// the formation long before the 10 s connect timeout.
func TestInitContextEndsWaitForPeer(t *testing.T) {
	w := newWorld(t, 2, hcclsim.Options{ConnectTimeout: 3 * time.Second})
	const wait = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	start := time.Now()
	c, err := hccl.InitRootInfoContext(ctx, w.sim, &w.root, 2, 0, hccl.OnStream(w.strs[0]))
	late := time.Since(start) - wait
	t.Logf("returned %v after the deadline: %v", late, err)
	require.Nil(t, c)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, hccl.ErrTimeout)
	assert.Less(t, late, time.Second)

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = hccl.InitRootInfoContext(ctx, w.sim, &w.root, 2, 0, hccl.OnStream(w.strs[0]))
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, hccl.ErrTimeout)
}

// TestDeviceBufferCloseAfterQueuedAllReduce: closing the send buffer right
// after the AllReduce was issued succeeds, and waits for the queued work:
// once Close returns the result is already in recv (a synchronous copy
// does not wait for the stream).
func TestDeviceBufferCloseAfterQueuedAllReduce(t *testing.T) {
	const n, count = 2, 1 << 16
	w := newWorld(t, n, hcclsim.Options{})
	comms := w.join(t)
	got := make([][]float32, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			errs[r] = func() error {
				send, err := w.devs[r].Malloc(4*count, acl.MemMallocHugeFirst)
				if err != nil {
					return err
				}
				recv, err := w.devs[r].Malloc(4*count, acl.MemMallocHugeFirst)
				if err != nil {
					return err
				}
				defer recv.Close()
				v := make([]float32, count)
				for i := range v {
					v[i] = float32(r + 1)
				}
				if err := send.CopyFromHost(f32bytes(v)); err != nil {
					return err
				}
				if err := comms[r].AllReduceMem(context.Background(), send, recv, count, hccl.Float32, hccl.Sum); err != nil {
					return err
				}
				if err := send.Close(); err != nil {
					return err
				}
				out := make([]byte, 4*count)
				if err := recv.CopyToHost(out); err != nil {
					return err
				}
				got[r] = bytesF32(out)
				return comms[r].Wait(context.Background())
			}()
		})
	}
	wg.Wait()
	want := make([]float32, count)
	for i := range want {
		want[i] = 3
	}
	for r := range n {
		require.NoError(t, errs[r], "rank %d", r)
		require.Equal(t, want, got[r], "rank %d", r)
	}
}

// TestCommMemMisuse: memory too small for count, a closed buffer, and acl
// memory on a communicator with a raw stream are refused before the
// backend sees an address.
func TestCommMemMisuse(t *testing.T) {
	w := newWorld(t, 1, hcclsim.Options{})
	comms := w.join(t)
	c := comms[0]
	ctx := context.Background()
	small, err := w.devs[0].Malloc(64, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	err = c.AllReduceMem(ctx, small, small, 17, hccl.Float32, hccl.Sum)
	assert.Equal(t, hccl.EPara, hccl.ResultOf(err), "%v", err)
	err = c.AllGatherMem(ctx, small, small, 16, hccl.Float32)
	assert.NoError(t, err, "one rank: recv holds 1 × 16")
	err = c.AllReduceMem(ctx, nil, small, 1, hccl.Float32, hccl.Sum)
	assert.Equal(t, hccl.EPtr, hccl.ResultOf(err), "%v", err)
	err = c.AllReduceMem(ctx, small, small, math.MaxUint64/2, hccl.Float32, hccl.Sum)
	assert.Equal(t, hccl.EPara, hccl.ResultOf(err), "overflowing count: %v", err)
	require.NoError(t, c.Wait(ctx))

	require.NoError(t, small.Close())
	err = c.AllReduceMem(ctx, small, small, 1, hccl.Float32, hccl.Sum)
	assert.ErrorIs(t, err, acl.ErrInvalidHandle, "closed buffer: %v", err)

	other, err := w.devs[0].Malloc(64, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	c.SetStream(w.strs[0].Handle())
	err = c.AllReduceMem(ctx, other, other, 1, hccl.Float32, hccl.Sum)
	assert.Equal(t, hccl.EPara, hccl.ResultOf(err), "%v", err)
	assert.Equal(t, hccl.EPara, hccl.ResultOf(c.Wait(ctx)))
	c.UseStream(w.strs[0])
	require.NoError(t, c.AllReduceMem(ctx, other, other, 16, hccl.Float32, hccl.Sum))
	require.NoError(t, c.Wait(ctx))
	var e *hccl.Error
	require.True(t, errors.As(hccl.Errorf("x", hccl.EPara, "y"), &e))
}
