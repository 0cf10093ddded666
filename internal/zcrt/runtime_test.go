package zcrt

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/stretchr/testify/require"
)

// Fake region bases: the runtime never dereferences addresses.
const (
	workBase   = 0x7f0000000000
	weightBase = 0x7e0000000000
)

func newRng(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed>>7))
}

// testModel compiles a model with two inputs, a weight and two outputs;
// x feeds two tasks, so its record has several slots. The dims are drawn
// at random so offsets and sizes vary from run to run.
func testModel(t testing.TB, rng *rand.Rand, opts ...ge.CompileOption) *ge.CompiledModel {
	t.Helper()
	m, k, n := int64(1+rng.IntN(8)), int64(1+rng.IntN(32)), int64(1+rng.IntN(32))
	g := ge.NewGraph("zc")
	x := g.Data("x", 0, acl.Float32, []int64{m, k})
	r := g.Data("r", 1, acl.Float32, []int64{m, n})
	w := g.ConstFloat32("w", acl.Float32, []int64{k, n}, make([]float32, k*n))
	y0 := g.Add(g.Relu(g.MatMul(x, w, ge.Name("fc")), ge.Name("relu")), r, ge.Name("add"))
	y1 := g.Mul(x, x, ge.Name("square"))
	g.Output(y0, y1)
	mod, err := ge.Compile(g, opts...)
	require.NoError(t, err)
	return mod
}

func newRuntime(t testing.TB, m *ge.CompiledModel, cfg Config) *Runtime {
	t.Helper()
	if cfg.WorkBase == 0 {
		cfg.WorkBase, cfg.WorkSize = workBase, uintptr(m.MemorySize)
		if cfg.ExcludeIO {
			cfg.WorkSize = uintptr(m.FeatureMapSize())
		}
	}
	if cfg.WeightBase == 0 {
		cfg.WeightBase, cfg.WeightSize = weightBase, uintptr(m.WeightSize)
	}
	r, err := New(m, cfg)
	require.NoError(t, err)
	return r
}

func requireCode(t *testing.T, want acl.Code, err error) *acl.Error {
	t.Helper()
	var e *acl.Error
	require.True(t, errors.As(err, &e), "want an *acl.Error with %s, got %v", want, err)
	require.Equal(t, want, e.Code, "%v", err)
	return e
}

// TestOffsetRecords checks every IO record against an independent walk of
// the model: the slots whose plan buffer is the IO's block, their relative
// offsets, and the argument memory built from the region bases.
func TestOffsetRecords(t *testing.T) {
	rng := newRng(t)
	m := testModel(t, rng)
	r := newRuntime(t, m, Config{})
	for _, io := range []struct {
		dir   ge.IODir
		descs []ge.IODesc
		recs  []IORecord
	}{{ge.IOInput, m.Inputs, r.Inputs()}, {ge.IOOutput, m.Outputs, r.Outputs()}} {
		require.Len(t, io.recs, len(io.descs))
		for i, d := range io.descs {
			rec := io.recs[i]
			require.Equal(t, ge.IORef{Dir: io.dir, Index: i}, rec.Ref)
			require.True(t, rec.ZeroCopy(), "%s %d", io.dir, i)
			var want []SlotRecord
			for ti, task := range m.Tasks {
				for ai, a := range task.Args {
					if a.Buffer == d.Buffer {
						want = append(want, SlotRecord{Task: ti, Arg: ai, Index: r.SlotStart(ti) + ai, Rel: a.Offset - d.BasicOffset, Size: a.Size})
					}
				}
			}
			require.Equal(t, want, rec.Slots, "%s %d", io.dir, i)
			refs := m.IOSlots(rec.Ref)
			require.Len(t, refs, len(rec.Slots))
			for k, s := range rec.Slots {
				require.Equal(t, ge.SlotRef{Task: s.Task, Arg: s.Arg}, refs[k])
				require.Equal(t, uint64(workBase+d.BasicOffset+s.Rel), r.Args()[s.Index])
			}
			require.Equal(t, uint64(workBase+d.BasicOffset), r.Current(rec.Ref))
		}
	}
	require.Len(t, r.Inputs()[0].Slots, 3, "x feeds MatMul and both operands of Mul")
	// Weight slots carry the weight base, feature-map slots the work base.
	for ti, task := range m.Tasks {
		for ai, a := range task.Args {
			want := uint64(workBase + a.Offset)
			if a.Mem == ge.MemFixed {
				want = uint64(weightBase + a.Offset)
			}
			require.Equal(t, want, r.TaskArgs(ti)[ai])
		}
	}
}

// TestClassification checks address types and refresh flags against the
// plan: weights are Fixed, feature-map buffers FeatureMap, IO blocks
// ModelIO; a task's flag has RefreshByModelIO exactly when it touches IO.
func TestClassification(t *testing.T) {
	rng := newRng(t)
	m := testModel(t, rng)
	for _, fm := range []bool{false, true} {
		r := newRuntime(t, m, Config{RefreshFeatureMap: fm})
		for ti, task := range m.Tasks {
			var io, feat bool
			for ai, a := range task.Args {
				b := m.Plan[a.Buffer]
				want := map[ge.MemType]AddrType{ge.MemFixed: AddrFixed, ge.MemFeatureMap: AddrFeatureMap, ge.MemModelIO: AddrModelIO}[b.Mem]
				require.Equal(t, want, r.SlotType(ti, ai), "task %q slot %d", task.Name, ai)
				io = io || want == AddrModelIO
				feat = feat || want == AddrFeatureMap
			}
			var flag uint64
			if io {
				flag |= RefreshByModelIO
			}
			if feat && fm {
				flag |= RefreshByFM
			}
			require.Equal(t, flag, r.TaskRefresh(ti), "task %q", task.Name)
			require.Equal(t, flag, TaskRefreshType(m, &m.Tasks[ti], fm))
		}
	}
	require.Equal(t, "ModelIO", AddrModelIO.String())
	require.Equal(t, uint64(0), RefreshType(AddrFixed, true))
}

func devBufs(rng *rand.Rand, recs []IORecord, slack int) []UserBuffer {
	u := make([]UserBuffer, len(recs))
	for i, rec := range recs {
		u[i] = UserBuffer{Addr: uintptr(0x100000000 + rng.IntN(1<<20)*4096), Size: uintptr(int(rec.Size) + slack), Place: PlaceDevice}
	}
	return u
}

// TestApplyRefreshesOnlyChangedSlots binds device buffers, re-binds the
// same ones (nothing patched), then swaps a random subset (only their
// slots patched) and checks every slot holds buffer + relative offset.
func TestApplyRefreshesOnlyChangedSlots(t *testing.T) {
	rng := newRng(t)
	m := testModel(t, rng)
	r := newRuntime(t, m, Config{})
	in, out := devBufs(rng, r.Inputs(), 0), devBufs(rng, r.Outputs(), 0)
	var e Exec
	all := 0
	for _, recs := range [][]IORecord{r.Inputs(), r.Outputs()} {
		for _, rec := range recs {
			all += len(rec.Slots)
		}
	}
	check := func() {
		for k, recs := range [][]IORecord{r.Inputs(), r.Outputs()} {
			bufs := [][]UserBuffer{in, out}[k]
			for i, rec := range recs {
				for _, s := range rec.Slots {
					require.Equal(t, uint64(bufs[i].Addr)+uint64(s.Rel), r.Args()[s.Index])
				}
			}
		}
	}
	require.NoError(t, r.Prepare("test", in, out, &e))
	require.Zero(t, e.Copies())
	require.Equal(t, all, r.Apply(&e))
	check()
	require.NoError(t, r.Prepare("test", in, out, &e))
	require.Zero(t, r.Apply(&e), "same buffers: nothing to patch")
	for round := range 20 {
		want := 0
		for i := range in {
			if rng.IntN(2) == 0 {
				in[i].Addr += 4096
				want += len(r.Inputs()[i].Slots)
			}
		}
		for i := range out {
			if rng.IntN(2) == 0 {
				out[i].Addr += 8192
				want += len(r.Outputs()[i].Slots)
			}
		}
		require.NoError(t, r.Prepare("test", in, out, &e))
		require.Equal(t, want, r.Apply(&e), "round %d", round)
		check()
	}
	st := r.Stats()
	require.Equal(t, uint64(22), st.Applies)
}

// TestHostBuffersAreCopied binds host buffers: the slots go back to the
// model's own blocks and each IO is copied with GE's lengths.
func TestHostBuffersAreCopied(t *testing.T) {
	rng := newRng(t)
	m := testModel(t, rng)
	r := newRuntime(t, m, Config{})
	in, out := devBufs(rng, r.Inputs(), 0), devBufs(rng, r.Outputs(), 0)
	var e Exec
	require.NoError(t, r.Prepare("test", in, out, &e))
	r.Apply(&e)
	in[0].Place, in[0].Size = PlaceHost, in[0].Size+100 // larger: copy the tensor only
	out[1].Place = PlaceHost
	require.NoError(t, r.Prepare("test", in, out, &e))
	require.Equal(t, 2, e.Copies())
	b := e.In[0]
	require.True(t, b.Copy)
	require.Equal(t, r.ModelAddr(&r.Inputs()[0]), b.Target)
	require.Equal(t, uintptr(r.Inputs()[0].Size), b.CopyLen)
	require.Equal(t, uintptr(r.Outputs()[1].Size), e.Out[1].CopyLen)
	require.False(t, e.In[1].Copy)
	require.Equal(t, len(r.Inputs()[0].Slots)+len(r.Outputs()[1].Slots), r.Apply(&e))
	for _, s := range r.Inputs()[0].Slots {
		require.Equal(t, uint64(r.ModelAddr(&r.Inputs()[0]))+uint64(s.Rel), r.Args()[s.Index])
	}
	// A short host input copies what it has.
	// (The random dims may make a tensor a single element: cut at most
	// half of it, never past zero.)
	short := func(size int64) uintptr { return uintptr(size - min(8, size/2)) }
	in[0].Size = short(r.Inputs()[0].Size)
	require.NoError(t, r.Prepare("test", in, out, &e))
	require.Equal(t, in[0].Size, e.In[0].CopyLen)
	// A short host output cannot receive the tensor.
	out[1].Size = short(r.Outputs()[1].Size)
	requireCode(t, acl.CodeGEInternalError, r.Prepare("test", in, out, &e))
}

// TestSizeRule checks GE's boundary: user + 64 < model fails, naming the
// IO and both sizes; 64 short passes; larger passes.
func TestSizeRule(t *testing.T) {
	rng := newRng(t)
	m := testModel(t, rng)
	r := newRuntime(t, m, Config{})
	var e Exec
	for _, dir := range []ge.IODir{ge.IOInput, ge.IOOutput} {
		recs := r.Inputs()
		if dir == ge.IOOutput {
			recs = r.Outputs()
		}
		for i, rec := range recs {
			if rec.Size <= SizeSlack {
				continue
			}
			for _, c := range []struct {
				delta int
				ok    bool
			}{{-SizeSlack, true}, {-SizeSlack - 1, false}, {0, true}, {1 + rng.IntN(1000), true}} {
				in, out := devBufs(rng, r.Inputs(), 0), devBufs(rng, r.Outputs(), 0)
				bufs := in
				if dir == ge.IOOutput {
					bufs = out
				}
				bufs[i].Size = uintptr(int(rec.Size) + c.delta)
				err := r.Prepare("aclmdlExecute", in, out, &e)
				if c.ok {
					require.NoError(t, err)
					require.Equal(t, max(bufs[i].Size, uintptr(rec.Size)), map[ge.IODir][]IOBind{ge.IOInput: e.In, ge.IOOutput: e.Out}[dir][i].Extent)
					continue
				}
				ae := requireCode(t, acl.CodeGEFailure, err)
				require.Equal(t, "aclmdlExecute", ae.Op)
				require.Contains(t, ae.Msg, rec.Name)
				require.Contains(t, ae.Msg, "plus the aligned 64 bytes is less than the tensor size")
				require.Contains(t, ae.Msg, itoa(int(bufs[i].Size)))
				require.Contains(t, ae.Msg, itoa(int(rec.Size)))
			}
		}
	}
}

func itoa(v int) string { return string(appendInt(nil, v)) }

func appendInt(b []byte, v int) []byte {
	if v >= 10 {
		b = appendInt(b, v/10)
	}
	return append(b, byte('0'+v%10))
}

func TestPrepareErrors(t *testing.T) {
	rng := newRng(t)
	m := testModel(t, rng)
	r := newRuntime(t, m, Config{})
	in, out := devBufs(rng, r.Inputs(), 0), devBufs(rng, r.Outputs(), 0)
	var e Exec
	ae := requireCode(t, acl.CodeGEFailure, r.Prepare("op", in[:1], out, &e))
	require.Contains(t, ae.Msg, "The number of inputs or outputs provided by the user is inconsistent")
	requireCode(t, acl.CodeGEFailure, r.Prepare("op", in, append(out, out[0]), &e))
	in[1].Addr = 0
	requireCode(t, acl.CodeGEExecModelAddrInvalid, r.Prepare("op", in, out, &e))
}

func TestReusePairs(t *testing.T) {
	require.Equal(t, []ReusePair{{0, 1}, {2, 0}}, ParseReusePairs("0,1|x,2|3|2, 0|-1,0|1,-2|"))
	require.Nil(t, ParseReusePairs(""))
	rng := newRng(t)
	m := testModel(t, rng)
	m.Attrs[OptionOutputReuseInputMemIndexes] = "1,0"
	r := newRuntime(t, m, Config{})
	require.Equal(t, []ReusePair{{1, 0}}, r.ReusePairs())
	in, out := devBufs(rng, r.Inputs(), 0), devBufs(rng, r.Outputs(), 0)
	var e Exec
	ae := requireCode(t, acl.CodeGEFailure, r.Prepare("op", in, out, &e))
	require.Contains(t, ae.Msg, "Output[0] address")
	require.Contains(t, ae.Msg, "must be same as Input[1] address")
	require.Contains(t, ae.Msg, "addr reuse check not pass")
	out[0].Addr = in[1].Addr
	require.NoError(t, r.Prepare("op", in, out, &e))
	r2 := newRuntime(t, m, Config{ReusePairs: []ReusePair{{5, 0}}})
	ae = requireCode(t, acl.CodeGEFailure, r2.Prepare("op", in, out, &e))
	require.Contains(t, ae.Msg, "out of range")
}

// TestWorkspaceMemOptimize: with the IO region excluded, the work memory
// needs only the feature map, IO slots start empty, and host buffers are
// refused with GE's message.
func TestWorkspaceMemOptimize(t *testing.T) {
	rng := newRng(t)
	m := testModel(t, rng)
	_, err := New(m, Config{WorkBase: workBase, WorkSize: uintptr(m.FeatureMapSize()) - 1, WeightBase: weightBase, WeightSize: uintptr(m.WeightSize)})
	ae := requireCode(t, acl.CodeGEParamInvalid, err)
	require.Contains(t, ae.Msg, "less than")
	r := newRuntime(t, m, Config{ExcludeIO: true})
	for _, rec := range r.Inputs() {
		require.Zero(t, r.Current(rec.Ref))
		for _, s := range rec.Slots {
			require.Zero(t, r.Args()[s.Index])
		}
	}
	in, out := devBufs(rng, r.Inputs(), 0), devBufs(rng, r.Outputs(), 0)
	var e Exec
	require.NoError(t, r.Prepare("op", in, out, &e))
	out[rng.IntN(len(out))].Place = PlaceHost
	ae = requireCode(t, acl.CodeGEFailure, r.Prepare("op", in, out, &e))
	require.Contains(t, ae.Msg, "Zero-copy memory reuse mode is enabled, requiring all I/O tensors to be allocated in device memory")
}

// TestWorkMemoryWithoutIO: caller work memory needs only the feature map
// (GE's required_minimum_size, memory_size - zero_copy_size); shorter than
// memory_size, the model has no IO blocks, so every IO is bound to a
// device buffer and a host buffer that would be copied there is refused.
func TestWorkMemoryWithoutIO(t *testing.T) {
	rng := newRng(t)
	m := testModel(t, rng)
	require.Positive(t, m.ZeroCopySize)
	size := uintptr(m.FeatureMapSize()) + uintptr(rng.Int64N(m.ZeroCopySize))
	_, err := New(m, Config{WorkBase: workBase, WorkSize: uintptr(m.FeatureMapSize()) - 1, WeightBase: weightBase, WeightSize: uintptr(m.WeightSize)})
	requireCode(t, acl.CodeGEParamInvalid, err)
	r, err := New(m, Config{WorkBase: workBase, WorkSize: size, WeightBase: weightBase, WeightSize: uintptr(m.WeightSize)})
	require.NoError(t, err)
	for _, rec := range r.Outputs() {
		require.Zero(t, r.Current(rec.Ref), "no model memory behind %s", rec.label())
	}
	in, out := devBufs(rng, r.Inputs(), 0), devBufs(rng, r.Outputs(), 0)
	var e Exec
	require.NoError(t, r.Prepare("op", in, out, &e))
	require.Zero(t, e.Copies())
	in[rng.IntN(len(in))].Place = PlaceHost
	ae := requireCode(t, acl.CodeGEParamInvalid, r.Prepare("op", in, out, &e))
	require.Contains(t, ae.Msg, "ends before the IO blocks")
}

func TestNewChecksRegions(t *testing.T) {
	rng := newRng(t)
	m := testModel(t, rng)
	_, err := New(m, Config{WorkBase: workBase, WorkSize: uintptr(m.MemorySize), WeightBase: weightBase, WeightSize: uintptr(m.WeightSize) - 1})
	requireCode(t, acl.CodeGEParamInvalid, err)
	_, err = New(m, Config{WorkBase: 0, WorkSize: uintptr(m.MemorySize), WeightBase: weightBase, WeightSize: uintptr(m.WeightSize)})
	requireCode(t, acl.CodeGEParamInvalid, err)
	_, err = New(nil, Config{})
	requireCode(t, acl.CodeInvalidParam, err)
	// A corrupted record is refused, never indexed out of range.
	bad := *m
	bad.Tasks = slices.Clone(m.Tasks)
	bad.Tasks[0].Args = slices.Clone(m.Tasks[0].Args)
	for i, a := range bad.Tasks[0].Args {
		if a.Mem == ge.MemModelIO {
			bad.Tasks[0].Args[i].Offset += 1 << 20
			break
		}
	}
	_, err = New(&bad, Config{WorkBase: workBase, WorkSize: uintptr(m.MemorySize), WeightBase: weightBase, WeightSize: uintptr(m.WeightSize)})
	requireCode(t, acl.CodeGEParamInvalid, err)
}

// TestCopyOnlyIO: an IO whose block the compiler put in the feature map
// (its consumer cannot take external addresses) and an IO reached through
// a NoZeroCopy slot in the IO region are copied whatever the placement,
// and their slots are never patched.
func TestCopyOnlyIO(t *testing.T) {
	rng := newRng(t)
	m := testModel(t, rng, ge.NoZeroCopyOps("square"))
	r := newRuntime(t, m, Config{})
	x := r.Inputs()[0]
	require.Equal(t, CopyInFeatureMap, x.CopyOnly, "x feeds the NoZeroCopy op")
	require.Equal(t, CopyInFeatureMap, r.Outputs()[1].CopyOnly)
	require.True(t, r.Inputs()[1].ZeroCopy())
	in, out := devBufs(rng, r.Inputs(), 0), devBufs(rng, r.Outputs(), 0)
	var e Exec
	require.NoError(t, r.Prepare("op", in, out, &e))
	require.Equal(t, 2, e.Copies())
	require.Equal(t, CopyInFeatureMap, e.In[0].Reason)
	// A zero-length buffer for the copy-only input is skipped, as GE skips
	// zero lengths on the copy path; on a zero-copy input it is refused.
	zero := slices.Clone(in)
	zero[0].Size = 0
	var ez Exec
	require.NoError(t, r.Prepare("op", zero, out, &ez))
	require.Equal(t, 1, ez.Copies(), "only the copy-only output is copied")
	zero[0].Size, zero[1].Size = in[0].Size, 0
	if r.Inputs()[1].Size > SizeSlack {
		requireCode(t, acl.CodeGEFailure, r.Prepare("op", zero, out, &ez))
	}
	before := slices.Clone(r.Args())
	patched := r.Apply(&e)
	require.Equal(t, len(r.Inputs()[1].Slots)+len(r.Outputs()[0].Slots), patched)
	for _, s := range x.Slots {
		require.Equal(t, before[s.Index], r.Args()[s.Index], "copied IO slots keep the model's address")
		require.Equal(t, AddrFeatureMap, r.SlotType(s.Task, s.Arg))
	}
	// Hand-made: a ModelIO slot flagged NoZeroCopy (GE's DisableZeroCopy).
	m2 := testModel(t, rng)
	var ref ge.IORef
	for ti := range m2.Tasks {
		for ai, a := range m2.Tasks[ti].Args {
			if a.Mem == ge.MemModelIO && ref.Dir == 0 {
				m2.Tasks[ti].Args[ai].NoZeroCopy, ref = true, a.IO
			}
		}
	}
	r2 := newRuntime(t, m2, Config{})
	rec := r2.record(ref)
	require.Equal(t, CopyNoZeroCopyConsumer, rec.CopyOnly)
	in, out = devBufs(rng, r2.Inputs(), 0), devBufs(rng, r2.Outputs(), 0)
	require.NoError(t, r2.Prepare("op", in, out, &e))
	require.Equal(t, 1, e.Copies())
	_, err := New(m2, Config{WorkBase: workBase, WorkSize: uintptr(m2.FeatureMapSize()), WeightBase: weightBase, WeightSize: uintptr(m2.WeightSize), ExcludeIO: true})
	ae := requireCode(t, acl.CodeGEParamInvalid, err)
	require.Contains(t, ae.Msg, "WORKSPACE_MEM_OPTIMIZE")
	// Caller work memory that ends before the IO blocks: the same refusal.
	_, err = New(m2, Config{WorkBase: workBase, WorkSize: uintptr(m2.FeatureMapSize()), WeightBase: weightBase, WeightSize: uintptr(m2.WeightSize)})
	ae = requireCode(t, acl.CodeGEParamInvalid, err)
	require.Contains(t, ae.Msg, "ends before the IO blocks")
}

// TestSteadyStateAllocs: Prepare and Apply with a reused Exec allocate
// nothing.
func TestSteadyStateAllocs(t *testing.T) {
	rng := newRng(t)
	m := testModel(t, rng)
	r := newRuntime(t, m, Config{})
	in, out := devBufs(rng, r.Inputs(), 0), devBufs(rng, r.Outputs(), 0)
	var e Exec
	allocs := testing.AllocsPerRun(100, func() {
		in[0].Addr ^= 4096
		if err := r.Prepare("op", in, out, &e); err != nil {
			t.Fatal(err)
		}
		r.Apply(&e)
	})
	require.Zero(t, allocs)
}
