package hccltest

import (
	"fmt"
	"testing"
	"time"

	"github.com/ascend-go/cann/hccl"
)

func (s *suite) testInit(t *testing.T) {
	t.Run("RootInfo", func(t *testing.T) {
		for _, n := range s.rankCounts() {
			t.Run(fmt.Sprintf("ranks=%d", n), func(t *testing.T) {
				s.needRanks(t, n)
				g := s.newGroup(t, n).mustInit()
				g.checkQueries(t, "")
				g.noErr("CommDestroy", g.destroy())
			})
		}
	})
	t.Run("RootInfoConfig", func(t *testing.T) {
		n := min(4, s.maxRanks)
		g := s.newGroup(t, n)
		cfg := hccl.NewCommConfig()
		name := fmt.Sprintf("hccltest_cfg_%d", s.seed&0xffff)
		if err := cfg.SetCommName(name); err != nil {
			t.Fatal(err)
		}
		g.noErr("CommInitRootInfoConfig", g.initRoot(cfg))
		g.checkQueries(t, name)
		g.noErr("CommDestroy", g.destroy())
	})
	t.Run("All", func(t *testing.T) {
		for _, n := range []int{1, 2, maxSuiteRanks} {
			t.Run(fmt.Sprintf("ranks=%d", n), func(t *testing.T) {
				s.needRanks(t, n)
				g := s.newGroup(t, n)
				devs := make([]int32, n)
				for i, w := range g.ws {
					devs[i] = w.dev
				}
				var hs []hccl.CommHandle
				g.noErr("CommInitAll", g.some([]int{0}, func(w *worker) error {
					var err error
					hs, err = g.b.CommInitAll(devs)
					return err
				}))
				if len(hs) != n {
					t.Fatalf("CommInitAll returned %d handles for %d devices", len(hs), n)
				}
				for i, w := range g.ws {
					w.comm = hs[i]
				}
				g.checkQueries(t, "")
				// Synchronize before freeing: the call only enqueues, and a
				// buffer freed under a queued collective fails it (after the
				// exec timeout), which this subtest is not about.
				g.noErr("AllReduce", g.each(func(w *worker) error {
					buf, err := w.alloc(64)
					if err != nil {
						return err
					}
					defer w.free(buf)
					if err := g.b.AllReduce(buf, buf, 16, hccl.Int32, hccl.Sum, w.comm, w.r.Stream()); err != nil {
						return err
					}
					return w.r.Sync()
				}))
				g.noErr("CommDestroy", g.destroy())
			})
		}
	})
	t.Run("ClusterInfo", s.testClusterInfo)
	t.Run("Errors", s.testInitErrors)
}

// checkQueries asserts size, ids and a common non-empty name (want, when
// given).
func (g *group) checkQueries(t *testing.T, want string) {
	t.Helper()
	n := len(g.ws)
	names := make([]string, n)
	g.noErr("queries", g.each(func(w *worker) error {
		size, err := g.b.GetRankSize(w.comm)
		if err != nil {
			return err
		}
		id, err := g.b.GetRankId(w.comm)
		if err != nil {
			return err
		}
		if int(size) != n || int(id) != w.rank {
			return fmt.Errorf("GetRankSize/GetRankId = %d/%d, want %d/%d", size, id, n, w.rank)
		}
		names[w.rank], err = g.b.GetCommName(w.comm)
		return err
	}))
	for r, nm := range names {
		if nm == "" || len(nm) >= hccl.CommNameMaxLength {
			t.Errorf("GetCommName on rank %d = %q", r, nm)
		}
		if nm != names[0] {
			t.Errorf("GetCommName on rank %d = %q, rank 0 has %q", r, nm, names[0])
		}
		if want != "" && nm != want {
			t.Errorf("GetCommName on rank %d = %q, config named it %q", r, nm, want)
		}
	}
}

func (s *suite) testInitErrors(t *testing.T) {
	g := s.newGroup(t, 1)
	b := g.b
	g.noErr("init errors", g.some([]int{0}, func(w *worker) error {
		root, err := b.GetRootInfo()
		if err != nil {
			return err
		}
		_, err = b.CommInitRootInfo(2, nil, 0)
		code(t, hccl.EPtr, err, "CommInitRootInfo with a null root info")
		_, err = b.CommInitRootInfo(0, &root, 0)
		code(t, hccl.EPara, err, "CommInitRootInfo with nRanks 0")
		_, err = b.CommInitRootInfo(2, &root, 2)
		code(t, hccl.EPara, err, "CommInitRootInfo with rank = nRanks")
		var junk hccl.RootInfo
		for i := range junk {
			junk[i] = byte(i*7 + 3)
		}
		_, err = b.CommInitRootInfo(1, &junk, 0)
		code(t, hccl.EPara, err, "CommInitRootInfo with a root info no GetRootInfo produced")
		_, err = b.CommInitRootInfoConfig(1, &root, 0, nil)
		code(t, hccl.EPtr, err, "CommInitRootInfoConfig with a null config")
		_, err = b.CommInitRootInfoConfig(1, &root, 0, new(hccl.CommConfig))
		code(t, hccl.EPara, err, "CommInitRootInfoConfig with a config never initialised")
		_, err = b.CommInitAll(nil)
		code(t, hccl.EPara, err, "CommInitAll with no devices")
		_, err = b.CommInitAll([]int32{w.dev, w.dev})
		code(t, hccl.EPara, err, "CommInitAll with a repeated device")
		_, err = b.CommInitAll([]int32{-1})
		code(t, hccl.EPara, err, "CommInitAll with device -1")

		// hcclBufferSize below 1 MB is HCCL_E_PARA; not set follows
		// HCCL_BUFFSIZE; any other value is this communicator's buffer
		// (hcomm legacy comm_config.cc:247-270).
		cfg := hccl.NewCommConfig()
		cfg.BufferSize = 0
		_, err = b.CommInitRootInfoConfig(1, &root, 0, cfg)
		code(t, hccl.EPara, err, "CommInitRootInfoConfig with hcclBufferSize 0")
		cfg.BufferSize = 1
		if err := initDestroy(b, cfg); err != nil {
			return fmt.Errorf("CommInitRootInfoConfig with hcclBufferSize 1: %w", err)
		}

		// A one-rank communicator from the root info still works after the
		// failed attempts.
		h, err := b.CommInitRootInfo(1, &root, 0)
		if err != nil {
			return fmt.Errorf("CommInitRootInfo after failed attempts: %w", err)
		}
		w.comm = h
		// Reusing the root info for a second communicator on this device
		// is HCCL_E_PARA: the communicator takes its name from the root
		// info and names are unique per device (op_base.cc:1747-1753).
		_, err = b.CommInitRootInfo(1, &root, 0)
		code(t, hccl.EPara, err, "CommInitRootInfo reusing the root info of a live communicator on this device")
		return nil
	}))
	// Two ranks claiming the same id, or disagreeing on nRanks: the root
	// server of the root info aborts the initialisation. It finds the
	// second agent of a rank id already connected
	// (hcomm legacy topoinfo_exchange_server.cc:490-496) or a rank count
	// different from the first joiner's (VerifyRemoteRankNum, :640-652),
	// both HCCL_E_INTERNAL; the root's init reports the server's failure
	// (topoinfo_detect.cc:458-460) and the other ranks fail on the sockets
	// the server closes (:132-135): HCCL_E_INTERNAL, or HCCL_E_TIMEOUT for
	// one that never hears back.
	if s.maxRanks >= 3 {
		g3 := s.newGroup(t, 3)
		pause := 100 * time.Millisecond
		if s.opts.Timeout > 0 {
			pause = min(pause, s.opts.Timeout/5)
		}
		for _, c := range []struct {
			name     string
			n, claim uint32
		}{
			{"a second rank joining with id 0", 2, 0},
			{"a rank joining with nRanks 4 where rank 0 said 2", 4, 1},
		} {
			var root hccl.RootInfo
			g3.noErr("GetRootInfo", g3.some([]int{0}, func(w *worker) error {
				var err error
				root, err = b.GetRootInfo()
				return err
			}))
			// Rank 0, in the process of the root info, joins first and
			// waits (a fraction of the timeout, so it is still waiting
			// when the other one joins).
			wait := g3.async([]int{0}, func(w *worker) error {
				h, err := b.CommInitRootInfo(2, &root, 0)
				if err == nil {
					w.comm = h
				}
				return err
			})
			time.Sleep(pause)
			errs := g3.some([]int{2}, func(w *worker) error {
				h, err := b.CommInitRootInfo(c.n, &root, c.claim)
				if err == nil {
					_ = b.CommDestroy(h)
				}
				return err
			})
			code(t, hccl.EInternal, wait()[0], "rank 0 (the root) when %s", c.name)
			if r := hccl.ResultOf(errs[2]); r != hccl.EInternal && r != hccl.ETimeout {
				t.Errorf("%s: got %v (%v), want %v or %v", c.name, r, errs[2], hccl.EInternal, hccl.ETimeout)
			}
		}
		// A fresh root info forms the communicator.
		var root hccl.RootInfo
		g3.noErr("GetRootInfo", g3.some([]int{0}, func(w *worker) error {
			var err error
			root, err = b.GetRootInfo()
			return err
		}))
		g3.noErr("CommInitRootInfo after the aborted ones", g3.some([]int{0, 1}, func(w *worker) error {
			h, err := b.CommInitRootInfo(2, &root, uint32(w.rank))
			if err == nil {
				w.comm = h
			}
			return err
		}))
	}
}

// initDestroy forms a one-rank communicator from a fresh root info with
// cfg and destroys it.
func initDestroy(b hccl.Backend, cfg *hccl.CommConfig) error {
	root, err := b.GetRootInfo()
	if err != nil {
		return err
	}
	h, err := b.CommInitRootInfoConfig(1, &root, 0, cfg)
	if err != nil {
		return err
	}
	return b.CommDestroy(h)
}
