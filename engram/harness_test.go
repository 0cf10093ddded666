package engram_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/engramjob"
)

const testTimeout = 60 * time.Second

// cluster is w ranks as devices of one fallback NPU, each with a stream
// and (w > 1) a communicator; w == 1 is local mode (no communicator).
type cluster struct {
	t       testing.TB
	npu     *fallback.NPU
	sim     *hcclsim.Sim
	rt      *acl.Runtime
	devs    []*acl.Device
	streams []*acl.Stream
	comms   []*hccl.Comm
}

func newCluster(t testing.TB, w int) *cluster { return newClusterLink(t, w, nil) }

// newClusterLink is newCluster with the HCCL fallback's link model.
func newClusterLink(t testing.TB, w int, link *hcclsim.LinkModel) *cluster {
	t.Helper()
	return newClusterOpts(t, w, hcclsim.Options{ExecTimeout: testTimeout, ConnectTimeout: testTimeout, Link: link})
}

// newClusterOpts is newCluster with the HCCL fallback's options.
func newClusterOpts(t testing.TB, w int, opts hcclsim.Options) *cluster {
	t.Helper()
	npu, err := fallback.New(fallback.WithDevices(max(w, 1)), fallback.WithDeviceMemory(512<<20), fallback.WithHostMemory(1<<30))
	require.NoError(t, err)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	c := &cluster{t: t, npu: npu, rt: rt}
	c.sim = hcclsim.New(npu, opts)
	t.Cleanup(c.close)
	for r := 0; r < w; r++ {
		d, err := rt.OpenDevice(int32(r))
		require.NoError(t, err)
		s, err := d.NewStream()
		require.NoError(t, err)
		c.devs, c.streams = append(c.devs, d), append(c.streams, s)
	}
	c.comms = make([]*hccl.Comm, w)
	if w > 1 {
		root, err := c.sim.GetRootInfo()
		require.NoError(t, err)
		require.NoError(t, c.each(func(r int) error {
			return c.devs[r].Do(func() error {
				cm, err := hccl.InitRootInfo(c.sim, &root, w, r, hccl.WithStream(c.streams[r].Handle()), hccl.WithDevice(int32(r)))
				c.comms[r] = cm
				return err
			})
		}))
	}
	return c
}

func (c *cluster) close() {
	for r, cm := range c.comms {
		if cm != nil {
			_ = c.devs[r].Do(cm.Close)
		}
	}
	_ = c.sim.Close()
	_ = c.rt.Close()
	_ = c.npu.Close()
}

// each runs f for every rank concurrently and joins the errors.
func (c *cluster) each(f func(r int) error) error {
	errs := make([]error, len(c.devs))
	var wg sync.WaitGroup
	for r := range c.devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = f(r)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// buffers creates one Buffer per rank.
func (c *cluster) buffers(cfg engram.Config) []*engram.Buffer {
	c.t.Helper()
	bs := make([]*engram.Buffer, len(c.devs))
	for r := range c.devs {
		b, err := engram.New(c.comms[r], c.devs[r], cfg)
		require.NoError(c.t, err)
		bs[r] = b
	}
	c.t.Cleanup(func() { _ = c.each(func(r int) error { return bs[r].Destroy() }) })
	return bs
}

// slices returns random table slices, one per rank.
func slices(seed uint64, w int, cfg engram.Config) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 99))
	out := make([][]byte, w)
	for r := range out {
		out[r] = make([]byte, cfg.EntriesPerRank*cfg.RowBytes())
		for i := range out[r] {
			out[r][i] = byte(rng.Uint32())
		}
	}
	return out
}

// gather is the reference: row g of the global table (the ranks' slices
// end to end), zeros for an out-of-range index.
func gather(tab [][]byte, e, rb int64, idx []int32) []byte {
	out := make([]byte, int64(len(idx))*rb)
	for i, g := range idx {
		if g < 0 || int64(g) >= int64(len(tab))*e {
			continue
		}
		r, k := int64(g)/e, int64(g)%e
		copy(out[int64(i)*rb:], tab[r][k*rb:(k+1)*rb])
	}
	return out
}

func zipf(rng *rand.Rand, n int, m int64, s float64) []int32 { return engramjob.Zipf(rng, n, m, s) }

func uniform(rng *rand.Rand, n int, m int64) []int32 { return engramjob.Uniform(rng, n, m) }

func readBack(t testing.TB, b *acl.DeviceBuffer, n int64) []byte {
	t.Helper()
	out := make([]byte, n)
	if n > 0 {
		require.NoError(t, b.CopyToHostAt(out, 0))
	}
	return out
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}
