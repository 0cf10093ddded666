package gert

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counting is a Manager that counts every call, per address, and frees an
// address when its owners reach zero. It fails the test on a free of memory
// with no owner left.
type counting struct {
	mu                   sync.Mutex
	t                    testing.TB
	owners               map[unsafe.Pointer]int
	frees, shares, addrs atomic.Int64
	released             map[unsafe.Pointer]int
}

func newCounting(t testing.TB) *counting {
	return &counting{t: t, owners: map[unsafe.Pointer]int{}, released: map[unsafe.Pointer]int{}}
}

func (c *counting) alloc(n int) unsafe.Pointer {
	p := unsafe.Pointer(unsafe.SliceData(make([]byte, n)))
	c.mu.Lock()
	c.owners[p] = 1
	c.mu.Unlock()
	return p
}

func (c *counting) Address(addr unsafe.Pointer) (unsafe.Pointer, error) {
	c.addrs.Add(1)
	return addr, nil
}

func (c *counting) Free(addr unsafe.Pointer) error {
	c.frees.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.owners[addr]
	if !ok || n <= 0 {
		c.t.Errorf("free of %p with no owner", addr)
		return errors.New("no owner")
	}
	c.owners[addr] = n - 1
	if n == 1 {
		c.released[addr]++
	}
	return nil
}

func (c *counting) AddShare(addr unsafe.Pointer) error {
	c.shares.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.owners[addr]++
	return nil
}

func TestTensorDataMoveLeavesSourceEmpty(t *testing.T) {
	c := newCounting(t)
	p := c.alloc(64)
	src := NewTensorData(p, 64, OnDeviceHbm, c)
	var dst TensorData
	require.NoError(t, dst.MoveFrom(src))

	got, err := dst.Addr()
	require.NoError(t, err)
	assert.Equal(t, p, got)
	assert.Equal(t, uint64(64), dst.Size())
	assert.Equal(t, OnDeviceHbm, dst.Placement())

	// The source is moved-from, as GE leaves it: no address, no size,
	// kTensorPlacementEnd; using it is an error, not a crash.
	assert.Equal(t, uint64(0), src.Size())
	assert.Equal(t, PlacementEnd, src.Placement())
	_, err = src.Addr()
	assert.ErrorIs(t, err, ErrMovedFrom)
	assert.ErrorIs(t, src.Free(), ErrMovedFrom)
	_, err = src.Share()
	assert.ErrorIs(t, err, ErrMovedFrom)
	assert.ErrorIs(t, (&TensorData{}).MoveFrom(src), ErrMovedFrom)
	assert.Zero(t, c.frees.Load(), "a move frees nothing")

	require.NoError(t, dst.Free())
	assert.Equal(t, int64(1), c.frees.Load())
	assert.ErrorIs(t, dst.Free(), ErrDoubleFree)
	_, err = dst.Addr()
	assert.ErrorIs(t, err, ErrFreed)
	assert.Equal(t, int64(1), c.frees.Load(), "a second Free does not reach the manager")
	assert.Equal(t, 1, c.released[p])
}

func TestTensorDataMoveIntoHeldFreesOldOnce(t *testing.T) {
	c := newCounting(t)
	a, b := c.alloc(8), c.alloc(8)
	dst := NewTensorData(a, 8, OnHost, c)
	require.NoError(t, dst.MoveFrom(NewTensorData(b, 8, OnHost, c)))
	assert.Equal(t, int64(1), c.frees.Load())
	assert.Equal(t, 1, c.released[a])
	got, _ := dst.Addr()
	assert.Equal(t, b, got)
	require.NoError(t, dst.MoveFrom(dst), "self-move is a no-op")
	require.NoError(t, dst.Free())
	assert.Equal(t, 1, c.released[b])
}

func TestTensorDataBorrowedIsNeverFreed(t *testing.T) {
	buf := make([]byte, 16)
	td := NewTensorData(unsafe.Pointer(&buf[0]), 16, OnHost, nil)
	assert.True(t, td.Held())
	assert.False(t, td.Owned())
	sh, err := td.Share()
	require.NoError(t, err)
	require.NoError(t, td.Free())
	require.NoError(t, sh.Free())
	assert.NoError(t, td.Free(), "borrowed data is forgotten, so it can be freed again")

	_, err = NewOwnedTensorData(unsafe.Pointer(&buf[0]), 16, OnHost, nil)
	assert.ErrorIs(t, err, ErrNilManager)
}

func TestTensorDataSharesFreeOnLast(t *testing.T) {
	var released atomic.Int64
	buf := make([]byte, 32)
	m := NewRefCounted(func(unsafe.Pointer) error { released.Add(1); return nil })
	td := NewTensorData(unsafe.Pointer(&buf[0]), 32, OnDeviceHbm, m)
	var shares []*TensorData
	for range 5 {
		s, err := td.Share()
		require.NoError(t, err)
		shares = append(shares, s)
	}
	assert.Equal(t, int64(6), m.Owners())
	require.NoError(t, td.Free())
	for i, s := range shares {
		assert.Zero(t, released.Load(), "released with %d owners left", len(shares)-i)
		require.NoError(t, s.Free())
	}
	assert.Equal(t, int64(1), released.Load())
	assert.ErrorIs(t, m.Free(nil), ErrDoubleFree)
	assert.ErrorIs(t, m.AddShare(nil), ErrDoubleFree)
	assert.Equal(t, int64(1), released.Load())
}

func TestTensorSetDataMoves(t *testing.T) {
	c := newCounting(t)
	p := c.alloc(24)
	tn := NewTensor(Shape{2, 3}, 0 /* acl.Float32 */, OnHost)
	n, err := tn.SizeInBytes()
	require.NoError(t, err)
	assert.Equal(t, uint64(24), n)
	td := NewTensorData(p, 24, OnHost, c)
	require.NoError(t, tn.SetData(td))
	_, err = td.Addr()
	assert.ErrorIs(t, err, ErrMovedFrom)
	got, err := tn.Addr()
	require.NoError(t, err)
	assert.Equal(t, p, got)
	require.NoError(t, tn.Free())
	assert.Equal(t, 1, c.released[p])
}

// TestTensorSetDataAllocatesNothing: moving owned data into a tensor and
// back out is a few stores: no allocation (BenchmarkSetDataMove times it),
// and the data survives the round trips.
func TestTensorSetDataAllocatesNothing(t *testing.T) {
	c := newCounting(t)
	p := c.alloc(64)
	src := NewTensorData(p, 64, OnDeviceHbm, c)
	tn := NewTensor(Shape{16}, 0, OnDeviceHbm)
	back := &TensorData{}
	allocs := testing.AllocsPerRun(100, func() {
		if err := tn.SetData(src); err != nil {
			t.Fatal(err)
		}
		if err := back.MoveFrom(tn.Data()); err != nil {
			t.Fatal(err)
		}
		src, back = back, src
	})
	assert.Zero(t, allocs)
	got, err := src.Addr()
	require.NoError(t, err)
	assert.Equal(t, p, got)
	assert.Zero(t, c.frees.Load(), "a move frees nothing")
	require.NoError(t, src.Free())
	assert.Equal(t, 1, c.released[p])
}

// TestTensorDataConcurrentMovesAndFrees hands data between goroutines by
// moving it into fresh TensorData values, sharing and freeing on the way;
// every block is released exactly once (the counting manager and -race
// check).
func TestTensorDataConcurrentMovesAndFrees(t *testing.T) {
	const blocks, hops = 200, 8
	c := newCounting(t)
	ch := make(chan *TensorData, blocks)
	var remaining atomic.Int64
	remaining.Store(blocks)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for td := range ch {
				next := &TensorData{}
				if err := next.MoveFrom(td); err != nil {
					t.Error(err)
					continue
				}
				if g%2 == 0 {
					s, err := next.Share()
					if err != nil {
						t.Error(err)
					} else if err := s.Free(); err != nil {
						t.Error(err)
					}
				}
				if h := next.Size(); h < hops { // the size counts the hops
					next.SetSize(h + 1)
					ch <- next
					continue
				}
				if err := next.Free(); err != nil {
					t.Error(err)
				}
				if remaining.Add(-1) == 0 {
					close(ch)
				}
			}
		})
	}
	ptrs := make([]unsafe.Pointer, blocks)
	for i := range ptrs {
		ptrs[i] = c.alloc(8)
		ch <- NewTensorData(ptrs[i], 1, OnDeviceHbm, c)
	}
	wg.Wait()
	for _, p := range ptrs {
		assert.Equal(t, 1, c.released[p])
	}
	assert.Equal(t, int64(blocks), c.frees.Load()-c.shares.Load())
}
