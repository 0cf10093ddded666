package hcclsim_test

import (
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// With a link model, each BatchGet to a peer waits what the model charges
// for its reads and bytes (the clock stands still, so the simulator's own
// copy took no time and the whole cost is waited), a second batch on the
// link queues behind the first's bytes but not its round trip, and the
// bytes arrive intact.
func TestLinkModelChargesBatches(t *testing.T) {
	const n, size = 2, 1 << 20
	npu := newNPU(t, n)
	lm := &hcclsim.LinkModel{Latency: 7 * time.Microsecond, Bandwidth: 1e9}
	waits := hcclsim.FakeLinkClock(lm)
	sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: testTimeout, ConnectTimeout: testTimeout, Link: lm})
	t.Cleanup(func() { _ = sim.Close() })
	g := newGroup(t, &npuEnv{npu: npu, sim: sim}, n)
	rng := rand.New(rand.NewPCG(5, 6))
	content := make([][]byte, n)
	mem := make([]unsafe.Pointer, n)
	for r := range content {
		content[r] = make([]byte, size)
		for i := range content[r] {
			content[r][i] = byte(rng.Uint32())
		}
	}
	g.must("fill", g.each(func(w *rankW) error {
		var err error
		mem[w.rank], err = w.buf(content[w.rank], 0)
		return err
	}))
	enabled := exchangeAll(t, g, mem, size)
	var got []byte
	g.on(0, func(w *rankW) error {
		local, err := w.buf(nil, 20000)
		if err != nil {
			return err
		}
		read := func(k, rowBytes, off int) error {
			ds := make([]hccl.OneSideOpDesc, k)
			for i := range ds {
				ds[i] = hccl.OneSideOpDesc{LocalAddr: unsafe.Add(local, off+i*rowBytes), RemoteAddr: enabled[0][1].Addr + uintptr(3*i*rowBytes),
					Count: uint64(rowBytes), DataType: hccl.Uint8}
			}
			if err := sim.BatchGet(w.comm, 1, ds, w.r.Stream()); err != nil {
				return err
			}
			return w.r.Sync()
		}
		if err := read(10, 100, 0); err != nil { // 7 µs + 1000 B at 1 GB/s
			return err
		}
		if err := read(200, 50, 1000); err != nil { // behind 1 µs of bytes: 1 + 10 + 7
			return err
		}
		got, err = w.read(local, 11000)
		return err
	})
	assert.Equal(t, []time.Duration{8 * time.Microsecond, 18 * time.Microsecond}, waits())
	for i := range 10 {
		require.Equal(t, content[1][3*i*100:][:100], got[i*100:][:100], "row %d of the first batch", i)
	}
	for i := range 200 {
		require.Equal(t, content[1][3*i*50:][:50], got[1000+i*50:][:50], "row %d of the second batch", i)
	}
}
