package engram_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	aclnative "github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/hccl"
	hcclnative "github.com/ascend-go/cann/hccl/native"
	"github.com/ascend-go/cann/internal/stubbuild"
)

// nativeWorld opens the native bindings over the C stubs (acl and hccl)
// and forms a communicator of w ranks; hcclDefines select a variant of
// the HCCL stub.
func nativeWorld(t *testing.T, w int, hcclDefines ...string) ([]*acl.Device, []*acl.Stream, []*hccl.Comm) {
	t.Helper()
	ab, err := aclnative.Open(aclnative.WithLibraryPath(stubbuild.BuildWith(t, "../acl/native/testdata/stub", aclnative.LibACL, stubbuild.Options{})))
	require.NoError(t, err)
	rt, err := acl.Init(ab, "")
	require.NoError(t, err)
	hb, err := hcclnative.Open(hcclnative.WithLibraryPath(stubbuild.BuildWith(t, "../hccl/native/testdata/stub", hcclnative.LibHCCL,
		stubbuild.Options{Defines: hcclDefines})))
	require.NoError(t, err)
	devs := make([]*acl.Device, w)
	streams := make([]*acl.Stream, w)
	for r := range devs {
		devs[r], err = rt.OpenDevice(int32(r))
		require.NoError(t, err)
		streams[r], err = devs[r].NewStream()
		require.NoError(t, err)
	}
	root, err := hb.GetRootInfo()
	require.NoError(t, err)
	comms := make([]*hccl.Comm, w)
	errs := make([]error, w)
	var wg sync.WaitGroup
	for r := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = devs[r].Do(func() error {
				c, err := hccl.InitRootInfo(hb, &root, w, r, hccl.WithStream(streams[r].Handle()), hccl.WithDevice(int32(r)))
				comms[r] = c
				return err
			})
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	t.Cleanup(func() {
		for r, c := range comms {
			_ = devs[r].Do(c.Close)
		}
		_ = rt.Close()
		_ = hb.Close()
		_ = ab.Close()
	})
	return devs, streams, comms
}

// The native binding over the C stubs (one-sided symbols present): the
// same fetch, byte-exact against the gather.
func TestNativeStub(t *testing.T) {
	const w, e = 2, 300
	devs, streams, comms := nativeWorld(t, w)
	cfg := engram.Config{EntriesPerRank: e, Hidden: 24, DType: engram.FP16, Capacity: engram.CapacityAlign}
	tab := slices(4, w, cfg)
	bs := make([]*engram.Buffer, w)
	for r := range bs {
		var err error
		bs[r], err = engram.New(comms[r], devs[r], cfg)
		require.NoError(t, err)
	}
	ctx := ctxT(t)
	each := func(f func(r int) error) error {
		errs := make([]error, w)
		var wg sync.WaitGroup
		for r := range errs {
			wg.Add(1)
			go func() { defer wg.Done(); errs[r] = f(r) }()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	require.NoError(t, each(func(r int) error { return bs[r].Write(ctx, engram.Storage{Rows: tab[r]}) }))
	require.NoError(t, each(func(r int) error {
		idx := uniform(rand.New(rand.NewPCG(9, uint64(r))), 2000, w*e)
		p, err := bs[r].Fetch(idx, streams[r])
		if err != nil {
			return err
		}
		res, err := p.Wait(ctx)
		if err != nil {
			return err
		}
		defer res.Rows.Close()
		if got := readBack(t, res.Rows, int64(len(idx))*cfg.RowBytes()); !bytes.Equal(got, gather(tab, e, cfg.RowBytes(), idx)) {
			return errors.New("rows differ from the gather")
		}
		return nil
	}))
	require.NoError(t, each(func(r int) error { return bs[r].Destroy() }))
}

// Where the library lacks the one-sided service, New fails with
// ErrNotSupported.
func TestNativeStubWithoutOneSided(t *testing.T) {
	devs, _, comms := nativeWorld(t, 2, "STUB_NO_ONESIDED")
	_, err := engram.New(comms[0], devs[0], engram.Config{EntriesPerRank: 1, Hidden: 1, DType: engram.BF16})
	require.ErrorIs(t, err, engram.ErrNotSupported)
	require.ErrorIs(t, err, hccl.ErrNotSupported)
	// Local mode needs no HCCL.
	b, err := engram.New(nil, devs[0], engram.Config{EntriesPerRank: 1, Hidden: 1, DType: engram.BF16})
	require.NoError(t, err)
	require.NoError(t, b.Destroy())
}
