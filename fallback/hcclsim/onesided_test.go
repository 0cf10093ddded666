package hcclsim_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/hccltest"
)

// holder is a rank whose stream the test can hold, so that an operation
// passes its call-time checks and runs later.
type holder interface {
	Hold() error
	Release() error
}

// exchangeAll registers mem[r] (size bytes) of every rank for every peer,
// exchanges the descriptors pairwise (in ascending peer order, which
// cannot deadlock) and enables them; it returns enabled[r][p], rank p's
// memory as rank r sees it.
func exchangeAll(t testing.TB, g *group, mem []unsafe.Pointer, size uint64) [][]hccl.CommMem {
	n := len(g.ws)
	enabled := make([][]hccl.CommMem, n)
	g.must("register, exchange, enable", g.each(func(w *rankW) error {
		enabled[w.rank] = make([]hccl.CommMem, n)
		for p := 0; p < n; p++ {
			if p == w.rank {
				continue
			}
			d, err := g.b.RegisterMem(w.comm, uint32(p), w.r.MemType(), mem[w.rank], size)
			if err != nil {
				return err
			}
			remote := make([]hccl.MemDesc, 2)
			got, err := g.b.ExchangeMemDesc(w.comm, uint32(p), []hccl.MemDesc{d}, 0, remote)
			if err != nil {
				return err
			}
			if got != 1 {
				return fmt.Errorf("ExchangeMemDesc with %d: %d descriptors", p, got)
			}
			if enabled[w.rank][p], err = g.b.EnableMemAccess(w.comm, &remote[0]); err != nil {
				return err
			}
		}
		return nil
	}))
	return enabled
}

// randomReads builds descriptors reading from a peer region of size
// bytes into a local buffer at base: many small reads (64–160 B, Engram
// rows) at random offsets and a few large ones, packed one after another
// in the local buffer. It returns the descriptors, the (remote offset,
// local offset, length) of each, and the local bytes used.
type readPlan struct{ roff, loff, n int }

func randomReads(rng *rand.Rand, local unsafe.Pointer, remote hccl.CommMem, small, large int) ([]hccl.OneSideOpDesc, []readPlan, int) {
	var ds []hccl.OneSideOpDesc
	var plan []readPlan
	off := 0
	add := func(n int) {
		roff := rng.IntN(int(remote.Size) - n + 1)
		ds = append(ds, hccl.OneSideOpDesc{LocalAddr: unsafe.Add(local, off), RemoteAddr: remote.Addr + uintptr(roff),
			Count: uint64(n), DataType: hccl.Uint8})
		plan = append(plan, readPlan{roff, off, n})
		off += n
	}
	for i := 0; i < small+large; i++ {
		if rng.IntN(small+large) < large {
			add(64<<10 + rng.IntN(200<<10))
		} else {
			add(64 + rng.IntN(97))
		}
	}
	rng.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i]; plan[i], plan[j] = plan[j], plan[i] })
	return ds, plan, off
}

// inBatches calls f with ds in batches of at most hccl.MaxOneSideDescs.
func inBatches(ds []hccl.OneSideOpDesc, f func([]hccl.OneSideOpDesc) error) error {
	for len(ds) > 0 {
		k := min(len(ds), hccl.MaxOneSideDescs)
		if err := f(ds[:k]); err != nil {
			return err
		}
		ds = ds[k:]
	}
	return nil
}

// TestBatchGetRandom: every rank reads random descriptor sets (over 9000
// descriptors in batches of 256, and batches of far more bytes than the
// staging buffer: more than one request round) from every peer, then writes into every peer with
// BatchPut; everything is checked byte for byte.
func TestBatchGetRandom(t *testing.T) {
	t.Parallel() // worlds of its own, no process-wide counts (see TestMain)
	const n, size = 3, 4 << 20
	for name, env := range envs(t, n) {
		t.Run(name, func(t *testing.T) {
			g := newGroup(t, env, n)
			b := g.b
			seed := rand.Uint64()
			content := make([][]byte, n)
			mem := make([]unsafe.Pointer, n)
			for r := range content {
				content[r] = genData(rand.New(rand.NewPCG(seed, uint64(r))), hccl.Uint8, size)
			}
			g.must("fill", g.each(func(w *rankW) error {
				var err error
				mem[w.rank], err = w.buf(content[w.rank], 0)
				return err
			}))
			enabled := exchangeAll(t, g, mem, size)

			// Reads.
			type read struct {
				plan []readPlan
				got  []byte
			}
			reads := make([][]read, n) // reads[r][p]
			g.must("BatchGet", g.each(func(w *rankW) error {
				rng := rand.New(rand.NewPCG(seed, uint64(100+w.rank)))
				reads[w.rank] = make([]read, n)
				for p := 0; p < n; p++ {
					if p == w.rank {
						continue
					}
					local, err := w.buf(nil, 16<<20)
					if err != nil {
						return err
					}
					ds, plan, used := randomReads(rng, local, enabled[w.rank][p], 9000, 12)
					if err := inBatches(ds, func(ds []hccl.OneSideOpDesc) error { return b.BatchGet(w.comm, uint32(p), ds, w.r.Stream()) }); err != nil {
						return err
					}
					if err := w.r.Sync(); err != nil {
						return err
					}
					got, err := w.read(local, used)
					if err != nil {
						return err
					}
					reads[w.rank][p] = read{plan, got}
				}
				return nil
			}))
			for r := range reads {
				for p, rd := range reads[r] {
					for i, x := range rd.plan {
						if d := diffAt(content[p][x.roff:x.roff+x.n], rd.got[x.loff:x.loff+x.n]); d != "" {
							t.Fatalf("rank %d read %d from rank %d: %s", r, i, p, d)
						}
					}
				}
			}

			// Writes: rank r owns the slice [r·size/n, (r+1)·size/n) of every
			// peer's memory and fills it with descriptors of random lengths.
			want := make([][]byte, n)
			for r := range want {
				want[r] = append([]byte(nil), content[r]...)
			}
			g.must("BatchPut", g.each(func(w *rankW) error {
				rng := rand.New(rand.NewPCG(seed, uint64(200+w.rank)))
				for p := 0; p < n; p++ {
					if p == w.rank {
						continue
					}
					lo, hi := w.rank*size/n, (w.rank+1)*size/n
					data := genData(rng, hccl.Uint8, hi-lo)
					src, err := w.buf(data, 0)
					if err != nil {
						return err
					}
					var ds []hccl.OneSideOpDesc
					for off := 0; off < len(data); {
						k := min(len(data)-off, 64+rng.IntN(3000))
						ds = append(ds, hccl.OneSideOpDesc{LocalAddr: unsafe.Add(src, off),
							RemoteAddr: enabled[w.rank][p].Addr + uintptr(lo+off), Count: uint64(k), DataType: hccl.Uint8})
						off += k
					}
					if err := inBatches(ds, func(ds []hccl.OneSideOpDesc) error { return b.BatchPut(w.comm, uint32(p), ds, w.r.Stream()) }); err != nil {
						return err
					}
					if err := w.r.Sync(); err != nil {
						return err
					}
					copy(want[p][lo:hi], data) // each writer owns its slice: no race
				}
				return nil
			}))
			g.must("Barrier", g.each(func(w *rankW) error {
				if err := b.Barrier(w.comm, w.r.Stream()); err != nil {
					return err
				}
				return w.r.Sync()
			}))
			g.must("check puts", g.each(func(w *rankW) error {
				got, err := w.read(mem[w.rank], size)
				if err != nil {
					return err
				}
				// Slice w.rank of w's own memory was never written.
				if d := diffAt(want[w.rank], got); d != "" {
					return fmt.Errorf("memory after BatchPut: %s", d)
				}
				return nil
			}))
		})
	}
}

// envsPedantic is envs with Options.Pedantic: ranks in process and rank
// processes.
func envsPedantic(t *testing.T, n int) map[string]hccltest.Env {
	t.Helper()
	npu := newNPU(t, n)
	sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: testTimeout, ConnectTimeout: testTimeout, Pedantic: true})
	t.Cleanup(func() { _ = sim.Close() })
	opts := procsOptions(64 << 10)
	opts.Pedantic = true
	return map[string]hccltest.Env{"inproc": &npuEnv{npu: npu, sim: sim}, "procs": &procEnv{cl: startCluster(t, n, opts)}}
}

// TestBatchGetErrors: the HCCL codes of docs/misuse.md for transfers that
// must fail, as the device's one-sided service gives them (hcomm legacy
// tree, one_sided_service/), and what a failing batch moved: by default
// the descriptors before the bad one (the device queues them one by one),
// with Options.Pedantic nothing. A batch whose memory is deregistered
// after the call passed its checks fails at the stream and moves nothing.
func TestBatchGetErrors(t *testing.T) {
	t.Parallel() // worlds of its own, no process-wide counts (see TestMain)
	const n = 2
	for _, pedantic := range []bool{false, true} {
		es := envs(t, n)
		if pedantic {
			es = envsPedantic(t, n)
		}
		for name, env := range es {
			t.Run(fmt.Sprintf("%s/pedantic=%v", name, pedantic), func(t *testing.T) { testBatchGetErrors(t, env, pedantic) })
		}
	}
}

func testBatchGetErrors(t *testing.T, env hccltest.Env, pedantic bool) {
	const n = 2
	g := newGroup(t, env, n)
	b := g.b
	const size = 1 << 20
	content := genData(rand.New(rand.NewPCG(rand.Uint64(), 1)), hccl.Uint8, 3*size)
	var owner unsafe.Pointer
	g.on(1, func(w *rankW) error {
		var err error
		owner, err = w.buf(content, 0)
		return err
	})
	// No exchange with rank 1 yet: no connection, HCCL_E_NOT_FOUND
	// (hccl_one_sided_service.cc:541-545).
	g.on(0, func(w *rankW) error {
		local, err := w.buf(nil, 64)
		if err != nil {
			return err
		}
		err = b.BatchGet(w.comm, 1, []hccl.OneSideOpDesc{{LocalAddr: local, RemoteAddr: uintptr(owner), Count: 8, DataType: hccl.Uint8}}, w.r.Stream())
		assert.Equal(t, hccl.ENotFound, hccl.ResultOf(err), "BatchGet before any exchange: %v", err)
		return nil
	})
	// Region A (exchanged, enabled), B (registered only), C (exchanged,
	// never enabled); the rest of the 3 MiB is never registered.
	var descs [3]hccl.MemDesc
	g.on(1, func(w *rankW) error {
		for i := range descs {
			var err error
			if descs[i], err = b.RegisterMem(w.comm, 0, w.r.MemType(), unsafe.Add(owner, i*size/2), size/4); err != nil {
				return err
			}
		}
		return nil
	})
	var recvd []hccl.MemDesc
	g.must("exchange", g.each(func(w *rankW) error {
		remote := make([]hccl.MemDesc, 4)
		local := []hccl.MemDesc{descs[0], descs[2]}
		if w.rank == 0 {
			local = nil
		}
		got, err := b.ExchangeMemDesc(w.comm, uint32(1-w.rank), local, 0, remote)
		if w.rank == 0 {
			recvd = remote[:got]
		}
		return err
	}))
	require.Len(t, recvd, 2)
	var a hccl.CommMem
	g.on(0, func(w *rankW) error {
		var err error
		a, err = b.EnableMemAccess(w.comm, &recvd[0])
		return err
	})
	base := a.Addr // rank 1's owner address
	g.on(0, func(w *rankW) error {
		local, err := w.buf(nil, size)
		if err != nil {
			return err
		}
		good := hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: base, Count: 256, DataType: hccl.Uint8}
		at := func(off uintptr, cnt uint64) hccl.OneSideOpDesc {
			return hccl.OneSideOpDesc{LocalAddr: unsafe.Add(local, 4096), RemoteAddr: base + off, Count: cnt, DataType: hccl.Uint8}
		}
		// check issues [good, bad] to rank peer and then reads what the
		// good descriptor's destination holds.
		check := func(peer uint32, want hccl.Result, bad hccl.OneSideOpDesc, goodMoves bool, what string) {
			t.Helper()
			require.NoError(t, w.r.Write(local, make([]byte, 256)))
			err := b.BatchGet(w.comm, peer, []hccl.OneSideOpDesc{good, bad}, w.r.Stream())
			assert.Equal(t, want, hccl.ResultOf(err), "%s: %v", what, err)
			require.NoError(t, w.r.Sync(), what)
			got, err := w.read(local, 256)
			require.NoError(t, err)
			if goodMoves && !pedantic {
				assert.Equal(t, content[:256], got, "%s: the device has already moved the good descriptor before the bad one", what)
			} else {
				assert.Equal(t, make([]byte, 256), got, "%s: nothing may move", what)
			}
			if goodMoves && pedantic && err != nil {
				assert.Contains(t, err.Error(), "pedantic:", what)
			}
		}
		// The remote range is looked up in the enabled memory, one
		// descriptor after the other (hccl_one_sided_conn.cc:372-375):
		// HCCL_E_INTERNAL for any range not inside it.
		check(1, hccl.EInternal, at(size/2, 64), true, "registered, never exchanged")
		check(1, hccl.EInternal, at(size, 64), true, "exchanged, not enabled")
		check(1, hccl.EInternal, at(size*5/2, 64), true, "never registered")
		check(1, hccl.EInternal, at(size/4-32, 64), true, "runs past the end")
		// An undefined data type: SalGetDataTypeSize's HCCL_E_PARA
		// (hccl_one_sided_conn.cc:363-366).
		bt := at(0, 8)
		bt.DataType = hccl.DataType(99)
		check(1, hccl.EPara, bt, true, "undefined data type")
		// The caller's own rank, more than 256 descriptors: refused whole
		// (one_sided_service_adapt.cc:410-413, 427-429).
		check(0, hccl.EPara, good, false, "to own rank")
		many := make([]hccl.OneSideOpDesc, hccl.MaxOneSideDescs+1)
		for i := range many {
			many[i] = good
		}
		assert.Equal(t, hccl.EPara, hccl.ResultOf(b.BatchGet(w.comm, 1, many, w.r.Stream())), "257 descriptors")
		assert.Equal(t, hccl.EPara, hccl.ResultOf(b.BatchPut(w.comm, 1, many, w.r.Stream())), "BatchPut of 257 descriptors")
		require.NoError(t, b.BatchGet(w.comm, 1, many[:hccl.MaxOneSideDescs], w.r.Stream()), "256 descriptors")
		assert.NoError(t, w.r.Sync())
		// BatchPut: the good descriptor before a bad one writes the peer's
		// memory by default, not with Pedantic.
		src, err := w.buf(content[2*size:2*size+256], 0)
		if err != nil {
			return err
		}
		put := hccl.OneSideOpDesc{LocalAddr: src, RemoteAddr: base + 1024, Count: 256, DataType: hccl.Uint8}
		err = b.BatchPut(w.comm, 1, []hccl.OneSideOpDesc{put, at(size*5/2, 64)}, w.r.Stream())
		assert.Equal(t, hccl.EInternal, hccl.ResultOf(err), "BatchPut [good, never registered]: %v", err)
		require.NoError(t, w.r.Sync())
		want := content[1024 : 1024+256]
		if !pedantic {
			want = content[2*size : 2*size+256]
		}
		require.NoError(t, b.BatchGet(w.comm, 1, []hccl.OneSideOpDesc{{LocalAddr: local, RemoteAddr: base + 1024, Count: 256, DataType: hccl.Uint8}}, w.r.Stream()))
		require.NoError(t, w.r.Sync())
		got, err := w.read(local, 256)
		require.NoError(t, err)
		assert.Equal(t, want, got, "the peer's memory after a BatchPut with a bad second descriptor")
		// Restore it for the checks below.
		if err := w.r.Write(src, content[1024:1024+256]); err != nil {
			return err
		}
		require.NoError(t, b.BatchPut(w.comm, 1, []hccl.OneSideOpDesc{put}, w.r.Stream()))
		return w.r.Sync()
	})

	// Deregistered after the call passed its checks: the transfer fails
	// when it runs (error completion), moving nothing, even for a batch
	// of many request rounds.
	var local unsafe.Pointer
	var many []hccl.OneSideOpDesc
	g.on(0, func(w *rankW) error {
		var err error
		if local, err = w.buf(nil, size/4); err != nil {
			return err
		}
		step := size / 4 / hccl.MaxOneSideDescs
		for off := 0; off+step <= size/4; off += step {
			many = append(many, hccl.OneSideOpDesc{LocalAddr: unsafe.Add(local, off), RemoteAddr: base + uintptr(off),
				Count: uint64(step), DataType: hccl.Uint8})
		}
		if err := w.r.(holder).Hold(); err != nil {
			return err
		}
		return b.BatchGet(w.comm, 1, many, w.r.Stream())
	})
	g.on(1, func(w *rankW) error { return b.DeregisterMem(w.comm, &descs[0]) })
	g.on(0, func(w *rankW) error {
		if err := w.r.(holder).Release(); err != nil {
			return err
		}
		require.Error(t, w.r.Sync(), "the stream reports the failed transfer")
		r, err := b.GetCommAsyncError(w.comm)
		require.NoError(t, err)
		assert.Equal(t, hccl.ERemote, r, "async error")
		got, err := w.read(local, size/4)
		if err != nil {
			return err
		}
		assert.Equal(t, make([]byte, size/4), got, "a failed batch moved bytes")
		// And at the call, once deregistered.
		assert.Equal(t, hccl.ERemote, hccl.ResultOf(b.BatchGet(w.comm, 1, many[:1], w.r.Stream())))
		return nil
	})
}
