package hcclsim_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/floatx"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/ascend-go/cann/internal/zcrt"
)

// modelWorld is one fallback NPU with one device per rank, the HCCL model
// over it and a communicator of all ranks (rank r on device r).
type modelWorld struct {
	npu *fallback.NPU
	sim *hcclsim.Sim
	hs  []hccl.CommHandle
}

func newModelWorld(t *testing.T, ranks int, timeout time.Duration) *modelWorld {
	t.Helper()
	npu, err := fallback.New(fallback.WithDevices(ranks), fallback.WithDeviceMemory(64<<20))
	require.NoError(t, err)
	require.NoError(t, npu.Init(""))
	sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: timeout, ConnectTimeout: timeout})
	t.Cleanup(func() {
		require.NoError(t, sim.Close())
		require.Zero(t, sim.Live(), "communicators left")
		require.NoError(t, npu.Close())
		require.Empty(t, npu.Leaks())
	})
	devs := make([]int32, ranks)
	for r := range devs {
		devs[r] = int32(r)
	}
	hs, err := sim.CommInitAll(devs)
	require.NoError(t, err)
	return &modelWorld{npu: npu, sim: sim, hs: hs}
}

// register registers every rank's communicator under group.
func (w *modelWorld) register(t *testing.T, group string) {
	t.Helper()
	for _, h := range w.hs {
		require.NoError(t, w.sim.RegisterModelComm(group, h))
	}
	t.Cleanup(func() {
		for _, h := range w.hs {
			_ = w.sim.UnregisterModelComm(group, h)
		}
	})
}

// rankResult is what one rank's executions produced and the runtime state
// the tests check afterwards.
type rankResult struct {
	outs     [][][]byte // per run, per output: the bytes read back
	bufs     []uintptr  // device buffers: inputs then outputs
	launches []npuhook.ModelLaunch
	stats    fallback.ModelStats
	ins      []zcrt.IORecord
	outRecs  []zcrt.IORecord
	modelIn  []uintptr // the model's own block of each input
	modelOut []uintptr
}

// runModels loads blobs[r] on device r and executes it once per entry of
// inputs (inputs[k][r][i]: run k, rank r, input i) on every rank
// concurrently, each rank from its own goroutine locked to an OS thread,
// with device buffers; even runs use ExecuteAsync, odd runs Execute. The
// NPU's counters are reset after every rank has loaded, so they count the
// executions only. Errors are per rank; a failed run stops that rank.
func (w *modelWorld) runModels(t *testing.T, blobs [][]byte, inputs [][][][]byte) ([]rankResult, []error) {
	t.Helper()
	ranks := len(blobs)
	res := make([]rankResult, ranks)
	errs := make([]error, ranks)
	var loaded, done sync.WaitGroup
	start := make(chan struct{})
	loaded.Add(ranks)
	done.Add(ranks)
	for r := range ranks {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			once := sync.OnceFunc(loaded.Done)
			defer once()
			errs[r] = w.rank(r, blobs[r], inputs, &res[r], func() { once(); <-start })
		}()
	}
	loaded.Wait()
	w.npu.ResetCounters()
	close(start)
	done.Wait()
	return res, errs
}

// rank is one rank's whole life: load, buffers, runs, inspection, cleanup.
func (w *modelWorld) rank(r int, blob []byte, inputs [][][][]byte, res *rankResult, ready func()) (err error) {
	n := w.npu
	keep := func(e error) {
		if err == nil {
			err = e
		}
	}
	if err := n.SetDevice(int32(r)); err != nil {
		return err
	}
	defer func() { keep(n.ResetDevice(int32(r))) }()
	m, err := ge.ParseModel(blob)
	if err != nil {
		return err
	}
	id, err := n.LoadFromMem(unsafe.Pointer(unsafe.SliceData(blob)), uintptr(len(blob)))
	if err != nil {
		return err
	}
	defer func() { keep(n.Unload(id)) }()
	s, err := n.CreateStream()
	if err != nil {
		return err
	}
	defer func() { keep(n.DestroyStream(s)) }()
	var views [][]byte
	sets := make([]acl.DatasetHandle, 2)
	for k, list := range [][]ge.IODesc{m.Inputs, m.Outputs} {
		if sets[k], err = n.CreateDataset(); err != nil {
			return err
		}
		defer func() { keep(n.DestroyDataset(sets[k])) }()
		for _, d := range list {
			p, err := n.Malloc(uintptr(d.Size), acl.MemMallocHugeFirst)
			if err != nil {
				return err
			}
			defer func() { keep(n.Free(p)) }()
			h, err := n.CreateDataBuffer(p, uintptr(d.Size))
			if err != nil {
				return err
			}
			defer func() { keep(n.DestroyDataBuffer(h)) }()
			if err := n.AddDatasetBuffer(sets[k], h); err != nil {
				return err
			}
			views = append(views, unsafe.Slice((*byte)(p), d.Size))
			res.bufs = append(res.bufs, uintptr(p))
		}
	}
	ready()
	for k := range inputs {
		for i, x := range inputs[k][r] {
			copy(views[i], x)
		}
		// One model id runs either with aclmdlExecute or with
		// aclmdlExecuteAsync, never both (GE: "NnExecute not support mix
		// execute"); the rank's runs are all asynchronous.
		if err := n.ExecuteAsync(id, sets[0], sets[1], s); err != nil {
			return err
		}
		if err := n.SynchronizeStream(s); err != nil {
			return err
		}
		var outs [][]byte
		for _, v := range views[len(m.Inputs):] {
			outs = append(outs, append([]byte(nil), v...))
		}
		res.outs = append(res.outs, outs)
	}
	if res.launches, err = npuhook.Of(n).ModelLaunches(id); err != nil {
		return err
	}
	if res.stats, err = n.ModelStats(id); err != nil {
		return err
	}
	rt, err := npuhook.Of(n).ModelRuntime(id)
	if err != nil {
		return err
	}
	res.ins, res.outRecs = rt.Inputs(), rt.Outputs()
	for _, rec := range res.ins {
		res.modelIn = append(res.modelIn, rt.ModelAddr(&rec))
	}
	for _, rec := range res.outRecs {
		res.modelOut = append(res.modelOut, rt.ModelAddr(&rec))
	}
	return nil
}

func requireRanksOK(t *testing.T, errs []error) {
	t.Helper()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
}

func newModelRand(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// tpLayer is rank r's share of a row-parallel linear layer,
// y = relu(AllReduce_sum(x_r · W_r)) with x_r [M,K], W_r [K,N]: the
// AllReduce reads and writes the feature map only.
type tpLayer struct {
	M, K, N int
	W       []float32
	blob    []byte
}

func newTPLayer(t *testing.T, rng *rand.Rand, flags []ge.OpOption) *tpLayer {
	t.Helper()
	p := &tpLayer{M: 8, K: 16, N: 24}
	p.W = getest.RandF32(rng, p.K*p.N)
	g := ge.NewGraph("tp_layer")
	x := g.Data("x", 0, acl.Float32, []int64{int64(p.M), int64(p.K)})
	w := g.ConstFloat32("w", acl.Float32, []int64{int64(p.K), int64(p.N)}, p.W)
	h := g.HcclAllReduce(g.MatMul(x, w, ge.Name("fc")), hccl.Sum, "tp", append([]ge.OpOption{ge.Name("ar")}, flags...)...)
	g.Output(g.Relu(h, ge.Name("relu")))
	m, err := ge.Compile(g)
	require.NoError(t, err)
	p.blob, err = m.MarshalBinary()
	require.NoError(t, err)
	return p
}

// TestModelAllReduceLayer: x → MatMul → HcclAllReduce → Relu → y on 2
// and 3 in-process ranks of one NPU, executed concurrently with fresh
// random data, equals the float64 reference of the whole N-rank layer on
// every rank; the model's IO stays zero-copy with or without flags, as the
// AllReduce touches only the feature map.
func TestModelAllReduceLayer(t *testing.T) {
	for _, ranks := range []int{2, 3} {
		for _, flagged := range []bool{false, true} {
			t.Run(fmt.Sprintf("ranks=%d/flags=%v", ranks, flagged), func(t *testing.T) {
				const runs = 4
				w := newModelWorld(t, ranks, hangBound)
				w.register(t, "tp")
				rng := newModelRand(t)
				var flags []ge.OpOption
				if flagged {
					flags = []ge.OpOption{ge.HcclZeroCopyFlags([]int64{1}, []int64{1})}
				}
				layers := make([]*tpLayer, ranks)
				blobs := make([][]byte, ranks)
				for r := range layers {
					layers[r] = newTPLayer(t, rng, flags)
					blobs[r] = layers[r].blob
				}
				p := layers[0]
				xs := make([][][]float32, runs)
				in := make([][][][]byte, runs)
				for k := range runs {
					for range ranks {
						x := getest.RandF32(rng, p.M*p.K)
						xs[k] = append(xs[k], x)
						in[k] = append(in[k], [][]byte{getest.F32Bytes(x)})
					}
				}
				res, errs := w.runModels(t, blobs, in)
				requireRanksOK(t, errs)
				c := w.npu.Counters()
				assert.Zero(t, c.Copies(), "IO bound to device buffers: no copy")
				assert.Equal(t, uint64(ranks*runs*3), c.Launches, "three tasks per execution")
				for k := range runs {
					want := make([]float64, p.M*p.N)
					for r, l := range layers {
						for i := range p.M {
							for j := range p.N {
								var s float64
								for q := range p.K {
									s += float64(xs[k][r][i*p.K+q]) * float64(l.W[q*p.N+j])
								}
								want[i*p.N+j] += s
							}
						}
					}
					for r := range ranks {
						got := getest.BytesF32(res[r].outs[k][0])
						for i, v := range want {
							v = math.Max(v, 0)
							require.InDelta(t, v, float64(got[i]), 1e-5*math.Max(1, math.Abs(v)), "run %d rank %d y[%d]", k, r, i)
						}
					}
				}
				for r := range ranks {
					l := res[r].launches[1]
					require.Equal(t, ge.OpHcclAllReduce, l.Op)
					assert.Equal(t, []zcrt.AddrType{zcrt.AddrFeatureMap, zcrt.AddrFeatureMap}, l.Types)
					assert.Equal(t, uint64(runs), res[r].stats.Executions)
					assert.Zero(t, res[r].stats.IOCopies)
				}
			})
		}
	}
}

// ioGraph builds y0 = AllReduce(x), y1 = x (a Memcpy task reads x): the
// AllReduce's input is a model input and its output a model output.
func ioGraph(t *testing.T, dt acl.DataType, op hccl.ReduceOp, dims []int64, flags ...ge.OpOption) []byte {
	t.Helper()
	g := ge.NewGraph("io_allreduce")
	x := g.Data("x", 0, dt, dims)
	y0 := g.HcclAllReduce(x, op, "tp", append([]ge.OpOption{ge.Name("ar")}, flags...)...)
	g.Output(y0, g.Identity(x))
	m, err := ge.Compile(g)
	require.NoError(t, err)
	blob, err := m.MarshalBinary()
	require.NoError(t, err)
	return blob
}

// elemCodec reads and writes one element type as float64, with values the
// type holds exactly and the tolerance of a reduction over ranks.
type elemCodec struct {
	dt   acl.DataType
	size int
	gen  func(rng *rand.Rand) float64
	put  func(b []byte, v float64)
	get  func(b []byte) float64
	tol  float64 // relative, of max(1, |want|)
}

func normal(r *rand.Rand) float64 { return r.NormFloat64() }

var codecs = map[acl.DataType]elemCodec{
	acl.Float32: {acl.Float32, 4,
		func(r *rand.Rand) float64 { return float64(float32(normal(r))) },
		func(b []byte, v float64) { binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v))) },
		func(b []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))) },
		1e-6},
	acl.Float16: {acl.Float16, 2,
		func(r *rand.Rand) float64 { return float64(floatx.F16ToF32(floatx.F64ToF16(normal(r)))) },
		func(b []byte, v float64) { binary.LittleEndian.PutUint16(b, floatx.F64ToF16(v)) },
		func(b []byte) float64 { return float64(floatx.F16ToF32(binary.LittleEndian.Uint16(b))) },
		4e-3},
	acl.BFloat16: {acl.BFloat16, 2,
		func(r *rand.Rand) float64 { return float64(floatx.BF16ToF32(floatx.F64ToBF16(normal(r)))) },
		func(b []byte, v float64) { binary.LittleEndian.PutUint16(b, floatx.F64ToBF16(v)) },
		func(b []byte) float64 { return float64(floatx.BF16ToF32(binary.LittleEndian.Uint16(b))) },
		3e-2},
	acl.Float64: {acl.Float64, 8,
		normal,
		func(b []byte, v float64) { binary.LittleEndian.PutUint64(b, math.Float64bits(v)) },
		func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) },
		1e-12},
	acl.Int32: {acl.Int32, 4,
		func(r *rand.Rand) float64 { return float64(r.IntN(201) - 100) },
		func(b []byte, v float64) { binary.LittleEndian.PutUint32(b, uint32(int32(v))) },
		func(b []byte) float64 { return float64(int32(binary.LittleEndian.Uint32(b))) },
		0},
	acl.Int64: {acl.Int64, 8,
		func(r *rand.Rand) float64 { return float64(r.IntN(2_000_001) - 1_000_000) },
		func(b []byte, v float64) { binary.LittleEndian.PutUint64(b, uint64(int64(v))) },
		func(b []byte) float64 { return float64(int64(binary.LittleEndian.Uint64(b))) },
		0},
}

func reduceRef(op hccl.ReduceOp, vals []float64) float64 {
	acc := vals[0]
	for _, v := range vals[1:] {
		switch op {
		case hccl.Sum:
			acc += v
		case hccl.Prod:
			acc *= v
		case hccl.Max:
			acc = math.Max(acc, v)
		case hccl.Min:
			acc = math.Min(acc, v)
		}
	}
	return acc
}

// ioRun executes the IO graph on every rank with fresh random inputs and
// checks y0 (the reduction over ranks) and y1 (the rank's own input)
// against the float64 reference.
func ioRun(t *testing.T, w *modelWorld, ranks, runs int, ec elemCodec, op hccl.ReduceOp, flags ...ge.OpOption) []rankResult {
	t.Helper()
	rng := newModelRand(t)
	dims := []int64{6, 40}
	count := int(dims[0] * dims[1])
	blobs := make([][]byte, ranks)
	for r := range blobs {
		blobs[r] = ioGraph(t, ec.dt, op, dims, flags...)
	}
	vals := make([][][]float64, runs) // run, rank, element
	in := make([][][][]byte, runs)
	for k := range runs {
		for range ranks {
			v := make([]float64, count)
			b := make([]byte, count*ec.size)
			for i := range v {
				v[i] = ec.gen(rng)
				ec.put(b[i*ec.size:], v[i])
			}
			vals[k] = append(vals[k], v)
			in[k] = append(in[k], [][]byte{b})
		}
	}
	res, errs := w.runModels(t, blobs, in)
	requireRanksOK(t, errs)
	per := make([]float64, ranks)
	for k := range runs {
		for r := range ranks {
			y0, y1 := res[r].outs[k][0], res[r].outs[k][1]
			for i := range count {
				for q := range ranks {
					per[q] = vals[k][q][i]
				}
				want := reduceRef(op, per)
				require.InDelta(t, want, ec.get(y0[i*ec.size:]), ec.tol*math.Max(1, math.Abs(want)), "%s %s run %d rank %d y0[%d]", ec.dt, op, k, r, i)
				require.Equal(t, vals[k][r][i], ec.get(y1[i*ec.size:]), "run %d rank %d y1[%d]", k, r, i)
			}
		}
	}
	return res
}

// TestModelAllReduceIOZeroCopy: with both zero-copy flags set, the
// AllReduce's argument slots take part in address refresh: its launch
// carries the caller's input and output addresses and no IO copy is made.
func TestModelAllReduceIOZeroCopy(t *testing.T) {
	for _, ranks := range []int{2, 3} {
		t.Run(fmt.Sprintf("ranks=%d", ranks), func(t *testing.T) {
			const runs = 4
			w := newModelWorld(t, ranks, hangBound)
			w.register(t, "tp")
			res := ioRun(t, w, ranks, runs, codecs[acl.Float32], hccl.Sum, ge.HcclZeroCopyFlags([]int64{1}, []int64{1}))
			assert.Zero(t, w.npu.Counters().Copies(), "zero copy: no IO copy on any rank")
			for r := range ranks {
				x, y0 := res[r].bufs[0], res[r].bufs[1]
				ar := res[r].launches[0]
				require.Equal(t, ge.OpHcclAllReduce, ar.Op)
				assert.Equal(t, []uint64{uint64(x), uint64(y0)}, ar.Args, "rank %d: the AllReduce reads and writes the caller's buffers", r)
				assert.Equal(t, []zcrt.AddrType{zcrt.AddrModelIO, zcrt.AddrModelIO}, ar.Types)
				assert.Equal(t, zcrt.NotCopyOnly, res[r].ins[0].CopyOnly)
				assert.Equal(t, zcrt.NotCopyOnly, res[r].outRecs[0].CopyOnly)
				assert.Contains(t, res[r].ins[0].Slots, zcrt.SlotRecord{Task: 0, Arg: 0, Index: 0, Rel: 0, Size: res[r].ins[0].Size},
					"the AllReduce's input slot is in the input's offset record")
				assert.Equal(t, 0, res[r].outRecs[0].Slots[0].Task)
				st := res[r].stats
				assert.Zero(t, st.IOCopies)
				assert.Equal(t, uint64(runs), st.Executions)
				// The buffers never change, so only the first run patched
				// the slots: every slot of every IO once.
				all := len(res[r].ins[0].Slots) + len(res[r].outRecs[0].Slots) + len(res[r].outRecs[1].Slots)
				assert.Equal(t, uint64(all), st.PatchedSlots)
				assert.Zero(t, st.LastPatched)
			}
		})
	}
}

// TestModelAllReduceIOCopyOnly: with the flags absent or 0 the IO the
// AllReduce touches is copy-only (its block in the feature map): exactly
// one D2D copy per copied IO per execution, the launch carries the model's
// own blocks, and the other output stays zero-copy.
func TestModelAllReduceIOCopyOnly(t *testing.T) {
	cases := []struct {
		name           string
		flags          []ge.OpOption
		inCopy, outCpy bool
	}{
		{"absent", nil, true, true},
		{"zeros", []ge.OpOption{ge.HcclZeroCopyFlags([]int64{0}, []int64{0})}, true, true},
		{"input only", []ge.OpOption{ge.HcclZeroCopyFlags([]int64{1}, []int64{0})}, false, true},
		{"output only", []ge.OpOption{ge.HcclZeroCopyFlags([]int64{0}, []int64{1})}, true, false},
	}
	for _, ranks := range []int{2, 3} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("ranks=%d/%s", ranks, c.name), func(t *testing.T) {
				const runs = 3
				w := newModelWorld(t, ranks, hangBound)
				w.register(t, "tp")
				ec := codecs[acl.Float32]
				res := ioRun(t, w, ranks, runs, ec, hccl.Sum, c.flags...)
				size := res[0].ins[0].Size
				var copies uint64
				for _, cp := range []bool{c.inCopy, c.outCpy} {
					if cp {
						copies++
					}
				}
				cnt := w.npu.Counters()
				assert.Equal(t, fallback.Traffic{Copies: uint64(ranks*runs) * copies, Bytes: uint64(ranks*runs) * copies * uint64(size)}, cnt.D2D,
					"one device-to-device copy per copied IO per execution")
				assert.Zero(t, cnt.H2D.Copies+cnt.D2H.Copies+cnt.H2H.Copies)
				for r := range ranks {
					st := res[r].stats
					assert.Equal(t, uint64(runs)*copies, st.IOCopies, "rank %d", r)
					ar := res[r].launches[0]
					require.Equal(t, ge.OpHcclAllReduce, ar.Op)
					wantX, wantY := uint64(res[r].bufs[0]), uint64(res[r].bufs[1])
					if c.inCopy {
						assert.Equal(t, zcrt.CopyInFeatureMap, res[r].ins[0].CopyOnly)
						wantX = uint64(res[r].modelIn[0])
						assert.Equal(t, zcrt.AddrFeatureMap, ar.Types[0])
					}
					if c.outCpy {
						assert.Equal(t, zcrt.CopyInFeatureMap, res[r].outRecs[0].CopyOnly)
						wantY = uint64(res[r].modelOut[0])
						assert.Equal(t, zcrt.AddrFeatureMap, ar.Types[1])
					}
					assert.Equal(t, []uint64{wantX, wantY}, ar.Args, "rank %d", r)
					assert.Equal(t, zcrt.NotCopyOnly, res[r].outRecs[1].CopyOnly, "y1 is written by a capable task")
					assert.Equal(t, uint64(res[r].bufs[2]), res[r].launches[len(res[r].launches)-1].Args[1], "the Memcpy writes the caller's y1")
				}
			})
		}
	}
}

// TestModelAllReduceTypes: reductions of every kind on the types models
// carry, across 3 ranks, zero copy.
func TestModelAllReduceTypes(t *testing.T) {
	cases := []struct {
		dt acl.DataType
		op hccl.ReduceOp
	}{
		{acl.Float32, hccl.Max}, {acl.Float16, hccl.Sum}, {acl.BFloat16, hccl.Min}, {acl.Float16, hccl.Max},
		{acl.Int32, hccl.Prod}, {acl.Int32, hccl.Sum}, {acl.Int64, hccl.Min}, {acl.Int64, hccl.Max},
	}
	const ranks = 3
	w := newModelWorld(t, ranks, hangBound)
	w.register(t, "tp")
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s", c.dt, c.op), func(t *testing.T) {
			ioRun(t, w, ranks, 2, codecs[c.dt], c.op, ge.HcclZeroCopyFlags([]int64{1}, []int64{1}))
			assert.Zero(t, w.npu.Counters().Copies())
		})
	}
}

// TestModelAllReduceUnknownGroup: a model whose group has no communicator
// fails its execution with a clear error and no hang, on its own rank at
// once; a peer that did register waits for the missing rank only until
// the communicator's timeout.
func TestModelAllReduceUnknownGroup(t *testing.T) {
	const ranks = 2
	w := newModelWorld(t, ranks, 300*time.Millisecond)
	require.NoError(t, w.sim.RegisterModelComm("tp", w.hs[0])) // rank 1 never registers
	t.Cleanup(func() { _ = w.sim.UnregisterModelComm("tp", w.hs[0]) })
	blob := ioGraph(t, acl.Float32, hccl.Sum, []int64{4, 4}, ge.HcclZeroCopyFlags([]int64{1}, []int64{1}))
	in := [][][][]byte{{{make([]byte, 64)}, {make([]byte, 64)}}}
	_, errs := w.runModels(t, [][]byte{blob, blob}, in)
	require.Error(t, errs[1])
	assert.Equal(t, acl.CodeRTModelExecute, acl.CodeOf(errs[1]), "%v", errs[1])
	assert.Contains(t, errs[1].Error(), `no communicator is registered for group "tp" on device 1`)
	require.Error(t, errs[0])
	assert.Equal(t, acl.CodeRTModelExecute, acl.CodeOf(errs[0]), "%v", errs[0])
	assert.Contains(t, errs[0].Error(), "HCCL_E_TIMEOUT")
}

// TestModelAllReduceDisagree: ranks whose models reduce different counts
// fail on every rank (HCCL_E_PARA), without a hang; a destroyed
// communicator fails the task at once.
func TestModelAllReduceDisagree(t *testing.T) {
	const ranks = 2
	w := newModelWorld(t, ranks, hangBound) // the disagreement fails at the meeting, at once
	w.register(t, "tp")
	blobs := [][]byte{ioGraph(t, acl.Float32, hccl.Sum, []int64{4, 4}), ioGraph(t, acl.Float32, hccl.Sum, []int64{4, 8})}
	in := [][][][]byte{{{make([]byte, 64)}, {make([]byte, 128)}}}
	_, errs := w.runModels(t, blobs, in)
	for r, err := range errs {
		require.Error(t, err, "rank %d", r)
		assert.Equal(t, acl.CodeRTModelExecute, acl.CodeOf(err), "%v", err)
		assert.Contains(t, err.Error(), "HCCL_E_PARA")
		assert.Contains(t, err.Error(), "count")
	}

	// Rank 0 alone, its communicator destroyed but still registered.
	require.NoError(t, w.sim.CommDestroy(w.hs[0]))
	_, errs = w.runModels(t, blobs[:1], [][][][]byte{{{make([]byte, 64)}}})
	require.Len(t, errs, 1)
	require.Error(t, errs[0])
	assert.Equal(t, acl.CodeRTModelExecute, acl.CodeOf(errs[0]), "%v", errs[0])
	assert.Contains(t, errs[0].Error(), "unknown or destroyed communicator")
	require.NoError(t, npuhook.Of(w.npu).UnregisterCollective(0, "tp"), "a destroyed handle is unregistered on the NPU")
}

// TestRegisterModelCommMisuse: handle and registration errors.
func TestRegisterModelCommMisuse(t *testing.T) {
	w := newModelWorld(t, 2, hangBound)
	code := func(err error) hccl.Result {
		t.Helper()
		require.Error(t, err)
		he, ok := err.(*hccl.Error)
		require.True(t, ok, "%T %v", err, err)
		return he.Code
	}
	assert.Equal(t, hccl.EPtr, code(w.sim.RegisterModelComm("g", 0)))
	assert.Equal(t, hccl.EPara, code(w.sim.RegisterModelComm("g", 0x1234)))
	require.NoError(t, w.sim.RegisterModelComm("g", w.hs[0]))
	err := w.sim.RegisterModelComm("g", w.hs[0])
	assert.Equal(t, hccl.EPara, code(err))
	assert.Contains(t, err.Error(), "already has a communicator on device 0")
	require.NoError(t, w.sim.RegisterModelComm("g", w.hs[1]), "the other rank's device")
	require.NoError(t, w.sim.UnregisterModelComm("g", w.hs[0]))
	assert.Equal(t, hccl.EPara, code(w.sim.UnregisterModelComm("g", w.hs[0])))
	require.NoError(t, w.sim.UnregisterModelComm("g", w.hs[1]))
}
