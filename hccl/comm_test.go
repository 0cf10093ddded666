package hccl

import (
	"context"
	"errors"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
)

// fakeBackend implements the few methods the idiomatic layer calls in these
// tests; the embedded nil interface makes any other call panic, which the
// tests would report.
type fakeBackend struct {
	Backend
	size, rank  uint32
	destroyed   []CommHandle
	registerErr error
	registered  int
	deregs      int
	batches     [][]OneSideOpDesc
}

func (f *fakeBackend) GetRankSize(CommHandle) (uint32, error) { return f.size, nil }
func (f *fakeBackend) GetRankId(CommHandle) (uint32, error)   { return f.rank, nil }
func (f *fakeBackend) CommDestroy(h CommHandle) error {
	f.destroyed = append(f.destroyed, h)
	return nil
}
func (f *fakeBackend) CommInitAll(devs []int32) ([]CommHandle, error) {
	hs := make([]CommHandle, len(devs))
	for i := range hs {
		hs[i] = CommHandle(100 + i)
	}
	return hs, nil
}
func (f *fakeBackend) RegisterMem(c CommHandle, peer uint32, typ MemType, addr unsafe.Pointer, size uint64) (MemDesc, error) {
	if f.registerErr != nil && f.registered == 1 {
		return MemDesc{}, f.registerErr
	}
	f.registered++
	return MemDesc{byte(peer)}, nil
}
func (f *fakeBackend) DeregisterMem(CommHandle, *MemDesc) error    { f.deregs++; return nil }
func (f *fakeBackend) DisableMemAccess(CommHandle, *MemDesc) error { return nil }
func (f *fakeBackend) BatchGet(c CommHandle, peer uint32, d []OneSideOpDesc, s acl.StreamHandle) error {
	f.batches = append(f.batches, append([]OneSideOpDesc(nil), d...))
	return nil
}

func TestCommLifecycle(t *testing.T) {
	f := &fakeBackend{size: 4, rank: 2}
	c, err := Wrap(f, 7, WithStream(9), WithDevice(3))
	require.NoError(t, err)
	assert.Equal(t, 2, c.Rank())
	assert.Equal(t, 4, c.Size())
	assert.EqualValues(t, 3, c.Device())
	assert.EqualValues(t, 9, c.Stream())
	c.SetStream(11)
	assert.EqualValues(t, 11, c.Stream())
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "Close is idempotent")
	assert.Equal(t, []CommHandle{7}, f.destroyed, "destroyed once")
	assert.ErrorIs(t, c.Barrier(context.Background()), ErrPara, "use after Close")
	_, err = c.Name()
	assert.ErrorIs(t, err, ErrPara)

	c2, err := Wrap(f, 8)
	require.NoError(t, err)
	assert.EqualValues(t, -1, c2.Device())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, c2.AllReduce(ctx, nil, nil, 1, Float32, Sum), context.Canceled)
	assert.ErrorIs(t, c2.Send(context.Background(), nil, 1, Float32, -1), ErrPara)
	assert.ErrorIs(t, c2.AlltoAllV(context.Background(), nil, []uint64{1}, nil, Float32, nil, nil, nil, Float32), ErrPara)

	comms, err := InitAll(f, []int32{5, 6}, WithStreams([]acl.StreamHandle{1, 2}))
	require.NoError(t, err)
	assert.EqualValues(t, 6, comms[1].Device())
	assert.EqualValues(t, 2, comms[1].Stream())
	_, err = InitAll(f, []int32{5, 6}, WithStreams([]acl.StreamHandle{1}))
	assert.ErrorIs(t, err, ErrPara)
}

func TestOpenWindowFailureUndoes(t *testing.T) {
	f := &fakeBackend{size: 3, rank: 0, registerErr: Errorf("HcclRegisterMem", ENotSupport, "no")}
	c, err := Wrap(f, 1)
	require.NoError(t, err)
	w, err := c.OpenWindow(context.Background(), MemDevice, unsafe.Pointer(&f.size), 4)
	assert.Nil(t, w)
	assert.ErrorIs(t, err, ErrNotSupported)
	assert.Equal(t, 1, f.deregs, "the registration made before the failure is undone")
}

func TestWindowRangeChecks(t *testing.T) {
	f := &fakeBackend{size: 2, rank: 0}
	c, err := Wrap(f, 1)
	require.NoError(t, err)
	w := &Window{c: c, local: make([]*LocalMem, 2), remote: []*RemoteMem{nil, {c: c, mem: CommMem{Addr: 0x1000, Size: 64}}}}
	ctx := context.Background()
	local := unsafe.Pointer(&f.size)
	require.NoError(t, w.Get(ctx, 1, []Transfer{{Local: local, Offset: 60, Count: 1, DataType: Int32}, {Local: local, Offset: 0, Count: 8, DataType: Float64}}))
	require.Len(t, f.batches, 1)
	assert.Equal(t, uintptr(0x1000+60), f.batches[0][0].RemoteAddr)
	assert.Equal(t, uint64(8), f.batches[0][1].Count)
	for _, r := range []Transfer{
		{Local: local, Offset: 61, Count: 1, DataType: Int32},
		{Local: local, Offset: 65, Count: 0, DataType: Int8},
		{Local: local, Offset: 0, Count: 1 << 62, DataType: Float64},
		{Local: local, Offset: 0, Count: 1, DataType: DataType(13)},
	} {
		err := w.Get(ctx, 1, []Transfer{r})
		assert.ErrorIs(t, err, ErrPara, "%+v", r)
	}
	assert.ErrorIs(t, w.Get(ctx, 2, nil), ErrPara, "out of range")
	assert.ErrorIs(t, w.Get(ctx, -1, nil), ErrPara, "out of range")
	assert.ErrorIs(t, w.Get(ctx, 0, []Transfer{{Local: local, Offset: 0, Count: 1, DataType: Int8}}), ErrPara, "own window is empty here")
	assert.Len(t, f.batches, 1, "refused ranges never reach the backend")
	assert.Equal(t, uint64(64), w.PeerSize(1))
	assert.Zero(t, w.PeerSize(0))
	assert.Zero(t, w.PeerSize(7))

	// The own rank's window: a one-sided batch to the own rank is
	// HCCL_E_PARA (one_sided_service_adapt.cc:427-429), refused here.
	own := make([]byte, 32)
	w.addr, w.size = unsafe.Pointer(&own[0]), uint64(len(own))
	assert.ErrorIs(t, w.Get(ctx, 0, []Transfer{{Local: local, Offset: 8, Count: 2, DataType: Int32}}), ErrPara)
	assert.Len(t, f.batches, 1)
	assert.Equal(t, uint64(32), w.PeerSize(0))
	// More than MaxOneSideDescs ranges: several batches.
	many := make([]Transfer, 2*MaxOneSideDescs+1)
	for i := range many {
		many[i] = Transfer{Local: local, Offset: uint64(i % 8 * 8), Count: 1, DataType: Float64}
	}
	require.NoError(t, w.Get(ctx, 1, many))
	require.Len(t, f.batches, 4)
	assert.Len(t, f.batches[1], MaxOneSideDescs)
	assert.Len(t, f.batches[3], 1)
	require.NoError(t, w.Close())
	assert.ErrorIs(t, w.Get(ctx, 1, nil), ErrPara, "closed")
	assert.False(t, errors.Is(w.Close(), ErrPara), "second Close returns the first result")
}
