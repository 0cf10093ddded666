package fallback

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/hccl"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/internal/zcrt"
)

// testWorld is an in-test communicator of n ranks for float32 sums: each
// rank posts its send buffer, all meet, each sums every rank's send buffer
// into its own receive buffer, all meet again (so no send buffer is
// reused while a peer still reads it). It stands in for the HCCL model,
// which has its own tests of models with collectives.
type testWorld struct {
	n       int
	timeout time.Duration
	mu      sync.Mutex
	arrived int
	gen     chan struct{}
	sends   [][]byte
	calls   int
}

func newTestWorld(n int) *testWorld {
	return &testWorld{n: n, timeout: hangBound, gen: make(chan struct{}), sends: make([][]byte, n)}
}

func (w *testWorld) meet() error {
	w.mu.Lock()
	ch := w.gen
	w.arrived++
	if w.arrived == w.n {
		w.arrived = 0
		w.gen = make(chan struct{})
		close(ch)
		w.mu.Unlock()
		return nil
	}
	w.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-time.After(w.timeout):
		return errors.New("test world: a rank did not arrive")
	}
}

type testRank struct {
	w    *testWorld
	rank int
}

func (r testRank) AllReduce(send, recv []byte, count uint64, dt acl.DataType, op hccl.ReduceOp) error {
	if dt != acl.Float32 || op != hccl.Sum {
		return fmt.Errorf("test world reduces float32 sums only, got %s %s", dt, op)
	}
	if uint64(len(send)) != 4*count || uint64(len(recv)) != 4*count {
		return fmt.Errorf("buffers of %d and %d bytes for %d elements", len(send), len(recv), count)
	}
	w := r.w
	w.mu.Lock()
	w.sends[r.rank] = send
	w.calls++
	w.mu.Unlock()
	if err := w.meet(); err != nil {
		return err
	}
	sum := make([]float32, count)
	for _, s := range w.sends {
		for i, v := range getF32s(s, int(count)) {
			sum[i] += v
		}
	}
	putF32s(recv, sum)
	return w.meet()
}

// failingComm fails every collective with err.
type failingComm struct{ err error }

func (f failingComm) AllReduce([]byte, []byte, uint64, acl.DataType, hccl.ReduceOp) error {
	return f.err
}

// tpModel is rank r's share of a row-parallel linear layer:
// y = relu(AllReduce_sum(x_r · W_r)), x_r [M,K], W_r [K,N].
type tpModel struct {
	M, K, N int
	W       []float32
	blob    []byte
	model   *ge.CompiledModel
}

func newTPModel(t *testing.T, rng *rand.Rand, group string, opts ...ge.OpOption) *tpModel {
	t.Helper()
	p := &tpModel{M: 4, K: 8, N: 16}
	p.W = getest.RandF32(rng, p.K*p.N)
	g := ge.NewGraph("tp")
	x := g.Data("x", 0, acl.Float32, []int64{int64(p.M), int64(p.K)})
	w := g.ConstFloat32("w", acl.Float32, []int64{int64(p.K), int64(p.N)}, p.W)
	h := g.HcclAllReduce(g.MatMul(x, w, ge.Name("fc")), hccl.Sum, group, append([]ge.OpOption{ge.Name("ar")}, opts...)...)
	g.Output(g.Relu(h, ge.Name("relu")))
	m, err := ge.Compile(g)
	require.NoError(t, err)
	p.blob, err = m.MarshalBinary()
	require.NoError(t, err)
	p.model = m
	return p
}

// tpRef is the whole layer in float64: relu(Σ_r x_r · W_r).
func tpRef(ps []*tpModel, xs [][]float32) []float64 {
	p0 := ps[0]
	y := make([]float64, p0.M*p0.N)
	for r, p := range ps {
		for i := range p.M {
			for j := range p.N {
				var s float64
				for k := range p.K {
					s += float64(xs[r][i*p.K+k]) * float64(p.W[k*p.N+j])
				}
				y[i*p.N+j] += s
			}
		}
	}
	for i, v := range y {
		y[i] = math.Max(v, 0)
	}
	return y
}

// onRanks runs f(r) for every rank on its own goroutine locked to a fresh
// OS thread with device r set, concurrently, and returns the errors.
func onRanks(n *NPU, ranks int, f func(r int) error) []error {
	errs := make([]error, ranks)
	var wg sync.WaitGroup
	for r := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if errs[r] = n.SetDevice(int32(r)); errs[r] != nil {
				return
			}
			errs[r] = f(r)
			if err := n.ResetDevice(int32(r)); errs[r] == nil {
				errs[r] = err
			}
		}()
	}
	wg.Wait()
	return errs
}

// TestModelCollectiveRanks: a model with an AllReduce loaded on every
// device of one NPU runs concurrently on each, through the registered
// communicators, and gives the whole layer's result on every rank.
func TestModelCollectiveRanks(t *testing.T) {
	const ranks, runs = 2, 3
	n := newTestNPU(t, WithDevices(ranks))
	rng := newRand(t)
	w := newTestWorld(ranks)
	ps := make([]*tpModel, ranks)
	for r := range ranks {
		ps[r] = newTPModel(t, rng, "tp")
		require.NoError(t, n.registerCollective(int32(r), "tp", testRank{w, r}))
	}
	xs := make([][][]float32, runs)
	ys := make([][][]float32, ranks)
	for k := range xs {
		xs[k] = make([][]float32, ranks)
		for r := range ranks {
			xs[k][r] = getest.RandF32(rng, ps[r].M*ps[r].K)
		}
	}
	errs := onRanks(n, ranks, func(r int) error {
		p := ps[r]
		id, err := n.LoadFromMem(unsafe.Pointer(unsafe.SliceData(p.blob)), uintptr(len(p.blob)))
		if err != nil {
			return err
		}
		s, err := n.CreateStream()
		if err != nil {
			return err
		}
		xp, err := n.Malloc(uintptr(4*p.M*p.K), acl.MemMallocHugeFirst)
		if err != nil {
			return err
		}
		yp, err := n.Malloc(uintptr(4*p.M*p.N), acl.MemMallocHugeFirst)
		if err != nil {
			return err
		}
		xb, yb := unsafeBytes(xp, uintptr(4*p.M*p.K)), unsafeBytes(yp, uintptr(4*p.M*p.N))
		in, out, err := testDatasets(n, xb, yb)
		if err != nil {
			return err
		}
		for k := range runs {
			putF32s(xb, xs[k][r])
			if err := n.ExecuteAsync(id, in, out, s); err != nil {
				return err
			}
			if err := n.SynchronizeStream(s); err != nil {
				return err
			}
			ys[r] = append(ys[r], getF32s(yb, p.M*p.N))
		}
		launches, err := n.modelLaunches(id)
		if err != nil {
			return err
		}
		if l := launches[1]; l.Op != ge.OpHcclAllReduce || l.Types[0] != zcrt.AddrFeatureMap || l.Types[1] != zcrt.AddrFeatureMap {
			return fmt.Errorf("launch 1 is %s with slots %v", l.Op, l.Types)
		}
		for _, f := range []func() error{
			func() error { return n.Unload(id) }, func() error { return n.DestroyStream(s) },
			func() error { return n.Free(xp) }, func() error { return n.Free(yp) },
		} {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	require.Equal(t, ranks*runs, w.calls)
	for k := range runs {
		want := tpRef(ps, xs[k])
		for r := range ranks {
			requireClose(t, want, ys[r][k], fmt.Sprintf("run %d rank %d", k, r))
		}
	}
}

// testDatasets builds an input dataset over x and an output one over y.
func testDatasets(n *NPU, x, y []byte) (in, out acl.DatasetHandle, err error) {
	mk := func(b []byte) (acl.DatasetHandle, error) {
		ds, err := n.CreateDataset()
		if err != nil {
			return 0, err
		}
		h, err := n.CreateDataBuffer(ptrOf(b), uintptr(len(b)))
		if err != nil {
			return 0, err
		}
		return ds, n.AddDatasetBuffer(ds, h)
	}
	if in, err = mk(x); err != nil {
		return 0, 0, err
	}
	out, err = mk(y)
	return in, out, err
}

// TestModelCollectiveErrors: a collective task whose group has no
// communicator on the model's device, or whose communicator fails, fails
// the execution with a clear error: at synchronize after ExecuteAsync
// (sticky on the stream), from Execute directly.
func TestModelCollectiveErrors(t *testing.T) {
	n := newTestNPU(t, WithDevices(2))
	rng := newRand(t)
	p := newTPModel(t, rng, "tp")
	id := loadBlob(t, n, p.blob)
	// A model id runs with aclmdlExecute or aclmdlExecuteAsync, not both
	// (hicann/ge runtime/v1/graph/load/model_manager/davinci_model.cc:
	// 7636-7638): the asynchronous runs use a second load of the model.
	idA := loadBlob(t, n, p.blob)
	xb, yb := devBytes(t, n, 4*p.M*p.K), devBytes(t, n, 4*p.M*p.N)
	in, _ := newDataset(t, n, xb)
	out, _ := newDataset(t, n, yb)
	s := mkStream(t, n)

	// Nothing registered; then registered on the other device only.
	for _, dev := range []int32{-1, 1} {
		if dev >= 0 {
			require.NoError(t, n.registerCollective(dev, "tp", testRank{newTestWorld(1), 0}))
		}
		err := n.Execute(id, in, out)
		requireCode(t, acl.CodeRTModelExecute, err)
		require.ErrorIs(t, err, acl.ErrStreamTask)
		assert.Contains(t, err.Error(), `task "ar" (HcclAllReduce): no communicator is registered for group "tp" on device 0`)
		require.NoError(t, n.ExecuteAsync(idA, in, out, s))
		err = n.SynchronizeStream(s)
		requireCode(t, acl.CodeRTModelExecute, err)
		assert.Contains(t, err.Error(), `group "tp"`)
	}
	require.NoError(t, n.unregisterCollective(1, "tp"))
	st, err := n.ModelStats(id)
	require.NoError(t, err)
	assert.Zero(t, st.Executions, "no execution ran to the end")

	// A communicator error becomes a model execution failure naming it;
	// an *acl.Error keeps its code.
	require.NoError(t, n.registerCollective(0, "tp", failingComm{errors.New("peer 1 lost")}))
	err = n.Execute(id, in, out)
	requireCode(t, acl.CodeRTModelExecute, err)
	assert.Contains(t, err.Error(), "peer 1 lost")
	require.NoError(t, n.unregisterCollective(0, "tp"))
	require.NoError(t, n.registerCollective(0, "tp", failingComm{acl.Errorf("hccl", acl.CodeRTTaskTimeout, "late")}))
	requireCode(t, acl.CodeRTTaskTimeout, n.Execute(id, in, out))
	require.NoError(t, n.unregisterCollective(0, "tp"))

	// A single-rank world succeeds: the sum over one rank is the input.
	require.NoError(t, n.registerCollective(0, "tp", testRank{newTestWorld(1), 0}))
	x := getest.RandF32(rng, p.M*p.K)
	putF32s(xb, x)
	require.NoError(t, n.Execute(id, in, out))
	requireClose(t, tpRef([]*tpModel{p}, [][]float32{x}), getF32s(yb, p.M*p.N), "y")
	require.NoError(t, n.Unload(id))
}

// TestModelCollectiveDefaultGroup: an op without a group runs on the
// world group; registering under "" is registering the world group.
func TestModelCollectiveDefaultGroup(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newTPModel(t, rng, "")
	id := loadBlob(t, n, p.blob)
	xb, yb := devBytes(t, n, 4*p.M*p.K), devBytes(t, n, 4*p.M*p.N)
	in, _ := newDataset(t, n, xb)
	out, _ := newDataset(t, n, yb)
	require.NoError(t, n.registerCollective(0, "", testRank{newTestWorld(1), 0}))
	requireCode(t, acl.CodeInvalidParam, n.registerCollective(0, ge.DefaultGroup, testRank{newTestWorld(1), 0}), "already registered")
	x := getest.RandF32(rng, p.M*p.K)
	putF32s(xb, x)
	require.NoError(t, n.Execute(id, in, out))
	requireClose(t, tpRef([]*tpModel{p}, [][]float32{x}), getF32s(yb, p.M*p.N), "y")
	require.NoError(t, n.unregisterCollective(0, ge.DefaultGroup))
	require.NoError(t, n.Unload(id))
}

func TestRegisterCollectiveMisuse(t *testing.T) {
	n := newTestNPU(t, WithDevices(2))
	c := testRank{newTestWorld(1), 0}
	requireCode(t, acl.CodeRTInvalidDeviceID, n.registerCollective(2, "g", c))
	requireCode(t, acl.CodeRTInvalidDeviceID, n.registerCollective(-1, "g", c))
	requireCode(t, acl.CodeInvalidParam, n.registerCollective(0, "g", nil))
	require.NoError(t, n.registerCollective(0, "g", c))
	require.NoError(t, n.registerCollective(1, "g", c), "one group on several devices")
	require.NoError(t, n.registerCollective(0, "h", c), "several groups on one device")
	err := n.registerCollective(0, "g", c)
	requireCode(t, acl.CodeInvalidParam, err)
	assert.True(t, strings.Contains(err.Error(), `group "g" already has a communicator on device 0`), err.Error())
	require.NoError(t, n.unregisterCollective(0, "g"))
	requireCode(t, acl.CodeInvalidParam, n.unregisterCollective(0, "g"), "twice")
	requireCode(t, acl.CodeInvalidParam, n.unregisterCollective(5, "g"))
	require.NoError(t, n.registerCollective(0, "g", c), "again after unregistering")
}

// TestModelCollectiveBadFlags: a model file whose HCCL op carries a flag
// list of the wrong length is refused at load (and by QuerySizeFromMem),
// as GE's load fails; the same graph does not compile.
func TestModelCollectiveBadFlags(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	p := newTPModel(t, rng, "tp", ge.HcclZeroCopyFlags([]int64{1}, []int64{1}))
	// Drop the single entry of input_zero_copy_flag: count 1 → 0 and the
	// 8-byte value removed, the tasks section and the header fixed up.
	b := bytes.Clone(p.blob)
	key := []byte(ge.AttrInputZeroCopyFlag)
	v := bytes.Index(b, key) + len(key)
	require.Equal(t, byte(ge.AttrInts), b[v])
	binary.LittleEndian.PutUint32(b[v+1:], 0)
	b = append(b[:v+5:v+5], b[v+13:]...)
	for off := ge.HeaderSize; off < len(b); {
		sz := binary.LittleEndian.Uint64(b[off+8:])
		if binary.LittleEndian.Uint32(b[off:]) == 5 { // the tasks section
			sz -= 8
			binary.LittleEndian.PutUint64(b[off+8:], sz)
		}
		off += 16 + int(sz)
	}
	binary.LittleEndian.PutUint64(b[16:], uint64(len(b)-ge.HeaderSize))
	binary.LittleEndian.PutUint32(b[24:], crc32.Checksum(b[ge.HeaderSize:], crc32.MakeTable(crc32.Castagnoli)))

	_, err := n.LoadFromMem(ptrOf(b), uintptr(len(b)))
	requireCode(t, acl.CodeGEParamInvalid, err)
	assert.Contains(t, err.Error(), "input_zero_copy_flag has 0 entries, the op has 1 inputs")
	_, _, err = n.QuerySizeFromMem(ptrOf(b), uintptr(len(b)))
	requireCode(t, acl.CodeGEParamInvalid, err)
	require.Empty(t, n.loadedModels())

	g := ge.NewGraph("bad")
	x := g.Data("x", 0, acl.Float32, []int64{4})
	g.Output(g.HcclAllReduce(x, hccl.Sum, "tp", ge.Name("ar"), ge.HcclZeroCopyFlags([]int64{1}, []int64{1, 0})))
	_, err = ge.Compile(g)
	requireCode(t, acl.CodeGEParamInvalid, err)
	assert.Contains(t, err.Error(), `node "ar" (HcclAllReduce): output_zero_copy_flag has 2 entries`)
}
