package onnx_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/ge/onnx"
)

// fuseModel is an imported model the fusion tests and benchmark run.
type fuseModel struct {
	name string
	g    *ge.Graph
}

// fuseModels imports the sample CNN and MLP and the float32 corpus models
// whose graphs the fusion pass rewrites, at their first input set's shapes.
func fuseModels(tb testing.TB) []fuseModel {
	tb.Helper()
	var ms []fuseModel
	add := func(name, path string, opts ...onnx.Option) {
		data, err := os.ReadFile(path)
		require.NoError(tb, err, name)
		g, err := onnx.Import(data, opts...)
		require.NoError(tb, err, name)
		ms = append(ms, fuseModel{name, g})
	}
	add("cnn", filepath.Join("testdata", "cnn.onnx"))
	add("gonnx-mlp", filepath.Join("testdata", "gonnx", "mlp.onnx"), onnx.WithInputShape("data_input", []int64{64, 3}))
	raw, err := os.ReadFile(filepath.Join(corpusDir, "manifest.json"))
	require.NoError(tb, err)
	var man struct {
		Models []struct {
			Name   string `json:"name"`
			Model  string `json:"model"`
			Inputs []struct {
				Name  string `json:"name"`
				Shape []any  `json:"shape"`
			} `json:"inputs"`
			Sets []corpusSet `json:"sets"`
		} `json:"models"`
	}
	require.NoError(tb, json.Unmarshal(raw, &man))
	for _, m := range man.Models {
		switch m.Name {
		case "mobilenetv3_block_op13", "ocr_det_db", "ocr_rec_crnn", "attention_dynamic_op17", "tf_nhwc_op13":
		default:
			continue
		}
		var opts []onnx.Option
		for _, in := range m.Inputs {
			dims := make([]int64, len(in.Shape))
			for i, d := range in.Shape {
				switch v := d.(type) {
				case float64:
					dims[i] = int64(v)
				case string:
					dims[i] = m.Sets[0].Dims[v]
				}
			}
			opts = append(opts, onnx.WithInputShape(in.Name, dims))
		}
		add(m.Name, filepath.Join(corpusDir, m.Model), opts...)
	}
	return ms
}

func opCounts(m *ge.CompiledModel) map[ge.OpType]int {
	c := map[ge.OpType]int{}
	for _, t := range m.Tasks {
		c[t.Op]++
	}
	return c
}

func randomInputs(tb testing.TB, r *rand.Rand, m *ge.CompiledModel) [][]byte {
	var in [][]byte
	for _, d := range m.Inputs {
		require.Equal(tb, acl.Float32, d.DataType)
		v := getest.RandFloats(r, int(d.Size/4), 1)
		in = append(in, append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), d.Size)...))
	}
	return in
}

// Imported models fuse: Conv → BatchNorm → Relu and Gemm → Relu of the
// sample CNN each become one task, every listed model loses tasks, and on
// fresh random inputs the fused model agrees with the unfused one (the
// corpus references are TestCorpus's, which runs fused).
func TestImportFusion(t *testing.T) {
	r := rand.New(rand.NewPCG(25, uint64(time.Now().UnixNano())))
	for _, fm := range fuseModels(t) {
		t.Run(fm.name, func(t *testing.T) {
			fused, err := ge.Compile(fm.g)
			require.NoError(t, err)
			plain, err := ge.Compile(fm.g, ge.WithoutFusion())
			require.NoError(t, err)
			require.NoError(t, getest.CheckModel(fused))
			fc, pc := opCounts(fused), opCounts(plain)
			t.Logf("%d tasks fused, %d unfused: %v", len(fused.Tasks), len(plain.Tasks), fc)
			assert.Less(t, len(fused.Tasks), len(plain.Tasks), "fusion must fire")
			if fm.name == "cnn" {
				assert.Zero(t, fc[ge.OpBatchNorm], "BatchNorm folded")
				assert.Equal(t, 2, fc[ge.OpFusedConv], "both Conv → Relu")
				assert.Equal(t, 1, pc[ge.OpBatchNorm])
			}
			in := randomInputs(t, r, fused)
			got, err := getest.Run(fused, in)
			require.NoError(t, err)
			want, err := getest.Run(plain, in)
			require.NoError(t, err)
			for i := range want {
				g, w := f32s(ge.HostTensor{Data: got[i]}), f32s(ge.HostTensor{Data: want[i]})
				var rms float64
				for _, v := range w {
					rms += float64(v) * float64(v)
				}
				rms = math.Sqrt(rms / float64(max(len(w), 1)))
				for j := range w {
					require.InDelta(t, w[j], g[j], 1e-4*(math.Abs(float64(w[j]))+rms), "output %d element %d", i, j)
				}
			}
		})
	}
}

// BenchmarkImportFusion runs imported models compiled with and without
// the fusion pass on one thread, alternating one run of each per round:
// ms_fused and ms_unfused are the median wall time per run, x_fusion
// their ratio.
func BenchmarkImportFusion(b *testing.B) {
	for _, fm := range fuseModels(b) {
		fused, err := ge.Compile(fm.g)
		require.NoError(b, err)
		plain, err := ge.Compile(fm.g, ge.WithoutFusion())
		require.NoError(b, err)
		b.Run(fm.name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			r := rand.New(rand.NewPCG(1, 2))
			in := randomInputs(b, r, fused)
			rf, rp := resolveRun(b, fused, in), resolveRun(b, plain, in)
			// Rounds until each side has run about 50 ms (at least 21);
			// the medians are robust to a preempted round.
			var tf, tp []time.Duration
			wallTime(rf) // warm the pools
			wallTime(rp)
			var total time.Duration
			for len(tf) < 21 || (total < 50*time.Millisecond && len(tf) < 5001) {
				a, c := wallTime(rp), wallTime(rf)
				tp, tf = append(tp, a), append(tf, c)
				total += c
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				rf()
			}
			b.StopTimer()
			mf, mp := medianDur(tf), medianDur(tp)
			b.ReportMetric(float64(mf.Nanoseconds())/1e6, "ms_fused")
			b.ReportMetric(float64(mp.Nanoseconds())/1e6, "ms_unfused")
			b.ReportMetric(float64(mp)/float64(mf), "x_fusion")
		})
	}
}

func medianDur(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// wallTime is the wall time of one run: the benchmark pins GOMAXPROCS to
// 1 and alternates the two models, so load hits both alike.
func wallTime(run func()) time.Duration {
	start := time.Now()
	run()
	return time.Since(start)
}

// resolveRun lays m out in one arena with its weights and inputs and
// returns a function that runs every task once, as the fallback's executor
// does (kernels called directly on resolved memory).
func resolveRun(b *testing.B, m *ge.CompiledModel, inputs [][]byte) func() {
	arena := func(n int64) []byte {
		raw := make([]byte, n+ge.MemAlignSize)
		off := (ge.MemAlignSize - int(uintptr(unsafe.Pointer(&raw[0]))%ge.MemAlignSize)) % ge.MemAlignSize
		return raw[off : int64(off)+n]
	}
	mem, w := arena(m.MemorySize), arena(m.WeightSize)
	copy(w, m.Weights)
	for i, d := range m.Inputs {
		copy(mem[d.BasicOffset:], inputs[i])
	}
	args := make([][][]byte, len(m.Tasks))
	for ti, t := range m.Tasks {
		for _, a := range t.Args {
			src := mem
			if a.Mem == ge.MemFixed {
				src = w
			}
			args[ti] = append(args[ti], src[a.Offset:a.Offset+a.Size])
		}
	}
	return func() {
		for ti := range m.Tasks {
			if err := ge.KernelFor(m.Tasks[ti].Op)(&m.Tasks[ti], args[ti]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
