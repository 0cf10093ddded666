package hcclsim_test

import (
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/fallback/hcclsim/procs"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/hccltest"
)

// strayLoop forms and destroys communicators over and over, each time with
// idle and noisy stray connections to the rendezvous, and checks that
// goroutines and fds of this process stay flat: a stray connection never
// keeps a finished rendezvous alive.
func strayLoop(t *testing.T, env hccltest.Env, n, iters int) {
	g := newGroup(t, env, n)
	g.must("destroy", g.each(func(w *rankW) error { err := g.b.CommDestroy(w.comm); w.comm = 0; return err }))
	round := func() {
		var root hccl.RootInfo
		g.on(0, func(w *rankW) error {
			var err error
			root, err = g.b.GetRootInfo()
			return err
		})
		addr := hcclsim.RootAddr(root[:])
		require.NotEmpty(t, addr)
		var strays []net.Conn
		for i := range 3 {
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			require.NoError(t, err)
			if i == 1 {
				_, _ = c.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
			}
			strays = append(strays, c) // held open past the world's end
		}
		g.must("CommInitRootInfo", g.each(func(w *rankW) error {
			var err error
			w.comm, err = g.b.CommInitRootInfo(uint32(n), &root, uint32(w.rank))
			return err
		}))
		g.must("Barrier", g.each(func(w *rankW) error {
			if err := g.b.Barrier(w.comm, w.r.Stream()); err != nil {
				return err
			}
			return w.r.Sync()
		}))
		g.must("destroy", g.each(func(w *rankW) error { err := g.b.CommDestroy(w.comm); w.comm = 0; return err }))
		for _, c := range strays {
			// The rendezvous hung up on each of them.
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			buf := make([]byte, 256)
			var err error
			for err == nil {
				_, err = c.Read(buf)
			}
			ne, ok := err.(net.Error)
			assert.False(t, ok && ne.Timeout(), "a stray connection is still open after the world ended")
			_ = c.Close()
		}
	}
	round()
	goroutines, fds := runtime.NumGoroutine(), openFDs()
	for range iters {
		round()
	}
	assert.True(t, settleLong(func() bool { return runtime.NumGoroutine() <= goroutines && openFDs() <= fds }),
		"goroutines %d (after one round %d), fds %d (after one round %d)", runtime.NumGoroutine(), goroutines, openFDs(), fds)
}

// TestStrayConnectionsInProcess: ranks of one process, 30 worlds.
func TestStrayConnectionsInProcess(t *testing.T) {
	npu := newNPU(t, 2)
	sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: 20 * time.Second, ConnectTimeout: 20 * time.Second})
	t.Cleanup(func() { _ = sim.Close() })
	strayLoop(t, &npuEnv{npu: npu, sim: sim}, 2, 30)
}

// TestStrayConnectionsMultiProcess: ranks as processes, 8 worlds.
func TestStrayConnectionsMultiProcess(t *testing.T) {
	cl := startCluster(t, 2, procs.Options{ExecTimeout: 20 * time.Second, ConnectTimeout: 20 * time.Second, BufferBytes: 256 << 10})
	strayLoop(t, &procEnv{cl: cl}, 2, 8)
}
