package onnx_test

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/onnx"
)

// interpCase is a corpus model whose runs are interpreted (a value
// decides its control flow) and a maker of fresh random inputs for it.
type interpCase struct {
	name string
	// feeds returns inputs for variant v (shapes and branch choices vary
	// with v).
	feeds func(r *rand.Rand, v int) []ge.HostTensor
}

func f32T(dims []int64, x []float32) ge.HostTensor {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Format: acl.FormatND, Dims: dims}, Data: b}
}

func i64T(v int64) ge.HostTensor {
	return ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Int64, Format: acl.FormatND}, Data: binary.LittleEndian.AppendUint64(nil, uint64(v))}
}

func randn32(r *rand.Rand, n int64, shift float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64()) + shift
	}
	return x
}

var interpCases = []interpCase{
	{"loop_counter", func(r *rand.Rand, v int) []ge.HostTensor {
		batch := []int64{1, 2, 5, 3}[v%4]
		steps := []int64{1, 3, 6, 11, 2}[v%5]
		return []ge.HostTensor{f32T([]int64{batch, 4}, randn32(r, batch*4, 0)), i64T(steps)}
	}},
	{"if_reducesum", func(r *rand.Rand, v int) []ge.HostTensor {
		batch := []int64{1, 2, 5, 8}[v%4]
		shift := []float32{3, -3, 0}[v%3] // both branches, and data that may go either way
		return []ge.HostTensor{f32T([]int64{batch, 4}, randn32(r, batch*4, shift))}
	}},
	{"if_vad_sr", func(r *rand.Rand, v int) []ge.HostTensor {
		batch, seq := []int64{1, 2, 3}[v%3], []int64{16, 9, 40, 1}[v%4]
		return []ge.HostTensor{f32T([]int64{batch, seq}, randn32(r, batch*seq, 0)), i64T([]int64{16000, 8000, 44100}[v%3])}
	}},
}

func loadInterpCase(t testing.TB, name string, opts ...onnx.Option) *onnx.Model {
	data, err := os.ReadFile(filepath.Join(corpusDir, name, "model.onnx"))
	require.NoError(t, err)
	m, err := onnx.Load(data, opts...)
	require.NoError(t, err)
	return m
}

// requireSameTensors: same dtypes and dims, values within a few ulps
// (the compiled kernels and the folding ones may round differently).
func requireSameTensors(t testing.TB, want, got []ge.HostTensor, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		require.Equal(t, want[i].Desc.DataType, got[i].Desc.DataType, "%s output %d", what, i)
		require.Equal(t, want[i].Desc.Dims, got[i].Desc.Dims, "%s output %d", what, i)
		require.Len(t, got[i].Data, len(want[i].Data), "%s output %d", what, i)
		if want[i].Desc.DataType != acl.Float32 {
			require.Equal(t, want[i].Data, got[i].Data, "%s output %d", what, i)
			continue
		}
		for k := 0; k < len(want[i].Data); k += 4 {
			w := math.Float32frombits(binary.LittleEndian.Uint32(want[i].Data[k:]))
			g := math.Float32frombits(binary.LittleEndian.Uint32(got[i].Data[k:]))
			require.InDelta(t, w, g, 1e-5+1e-5*math.Abs(float64(w)), "%s output %d element %d", what, i, k/4)
		}
	}
}

// TestStagedMatchesInterpreter: the corpus models whose runs are
// interpreted give, through their staged plans (Run and RunInto), the
// interpreter's outputs on fresh random inputs at several shapes and on
// both sides of every data-dependent branch, and every run is staged (none
// falls back to the interpreter).
func TestStagedMatchesInterpreter(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 25))
	for _, c := range interpCases {
		t.Run(c.name, func(t *testing.T) {
			m := loadInterpCase(t, c.name)
			var into []ge.HostTensor
			const runs = 12
			for v := range runs {
				in := c.feeds(r, v)
				want, err := onnx.Interpret(context.Background(), m, in)
				require.NoError(t, err)
				got, err := m.Run(context.Background(), in)
				require.NoError(t, err)
				requireSameTensors(t, want, got, "Run")
				into, err = m.RunInto(context.Background(), in, into)
				require.NoError(t, err)
				requireSameTensors(t, want, into, "RunInto")
			}
			st := m.Stats()
			require.Equal(t, int64(2*runs), st.Interpreted)
			require.Equal(t, int64(2*runs), st.Staged, "every run staged, none interpreted node by node")
		})
	}
}

// TestStagedRunAllocatesNothing: after warm-up, RunInto of an interpreted
// model allocates nothing on the Go heap at any of its shape tuples and
// branch choices (the stages, their buffers and the outputs are reused).
func TestStagedRunAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), 26))
	for _, c := range interpCases {
		t.Run(c.name, func(t *testing.T) {
			m := loadInterpCase(t, c.name)
			ctx := context.Background()
			for v := range 3 {
				in := c.feeds(r, v)
				var out []ge.HostTensor
				var err error
				for range 3 {
					out, err = m.RunInto(ctx, in, out)
					require.NoError(t, err)
				}
				allocs := testing.AllocsPerRun(20, func() {
					out, err = m.RunInto(ctx, in, out)
				})
				require.NoError(t, err)
				require.Zero(t, allocs, "variant %d", v)
			}
		})
	}
}

// BenchmarkInterpretedModels: one run of each interpreted corpus model,
// staged (RunInto, outputs reused) beside the interpreter alone, with
// allocs/op; staged/interp is the ratio measured in the same run.
func BenchmarkInterpretedModels(b *testing.B) {
	for _, c := range interpCases {
		m := loadInterpCase(b, c.name)
		in := c.feeds(rand.New(rand.NewPCG(1, 2)), 1)
		ctx := context.Background()
		var staged, interp float64
		b.Run(c.name+"/staged", func(b *testing.B) {
			var out []ge.HostTensor
			var err error
			for range 3 { // warm up: the stages built, the buffers sized
				if out, err = m.RunInto(ctx, in, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if out, err = m.RunInto(ctx, in, out); err != nil {
					b.Fatal(err)
				}
			}
			staged = float64(b.Elapsed()) / float64(b.N)
		})
		b.Run(c.name+"/interp", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := onnx.Interpret(ctx, m, in); err != nil {
					b.Fatal(err)
				}
			}
			interp = float64(b.Elapsed()) / float64(b.N)
			b.ReportMetric(staged/interp, "staged/interp")
		})
	}
}

// TestStagedConcurrentRuns: runs of one Model from several goroutines,
// each on its own inputs (different shapes and branches), each get the
// interpreter's outputs for their inputs: the stages' caches and the
// pooled run states are shared safely (run it with -race).
func TestStagedConcurrentRuns(t *testing.T) {
	for _, c := range interpCases {
		t.Run(c.name, func(t *testing.T) {
			m := loadInterpCase(t, c.name)
			const workers, runs = 4, 8
			type job struct{ in, want []ge.HostTensor }
			jobs := make([][]job, workers)
			r := rand.New(rand.NewPCG(rand.Uint64(), 27))
			for w := range jobs {
				for v := range runs {
					in := c.feeds(r, w+v)
					want, err := onnx.Interpret(context.Background(), m, in)
					require.NoError(t, err)
					jobs[w] = append(jobs[w], job{in, want})
				}
			}
			errs := make(chan error, workers)
			got := make([][][]ge.HostTensor, workers)
			for w := range workers {
				go func() {
					var out []ge.HostTensor
					var err error
					for _, j := range jobs[w] {
						if out, err = m.RunInto(context.Background(), j.in, out); err != nil {
							errs <- err
							return
						}
						var keep []ge.HostTensor
						for _, o := range out {
							keep = append(keep, ge.HostTensor{Desc: ge.TensorDesc{DataType: o.Desc.DataType, Dims: append([]int64(nil), o.Desc.Dims...)}, Data: append([]byte(nil), o.Data...)})
						}
						got[w] = append(got[w], keep)
					}
					errs <- nil
				}()
			}
			for range workers {
				require.NoError(t, <-errs)
			}
			for w := range workers {
				for k, j := range jobs[w] {
					requireSameTensors(t, j.want, got[w][k], "concurrent run")
				}
			}
			require.Equal(t, int64(workers*runs), m.Stats().Staged)
		})
	}
}

// TestStagedLoopLimits: a staged Loop keeps the run's bounds: its scan
// outputs past the memory limit fail the run with ErrOutOfMemory (and the
// ACL code), and a trip count too long for the context ends with
// ErrCanceled, not a hang.
func TestStagedLoopLimits(t *testing.T) {
	m := loadInterpCase(t, "loop_counter", onnx.WithMemoryLimit(4096))
	x := f32T([]int64{1, 4}, []float32{0.1, -0.2, 0.3, 0.4})
	out, err := m.Run(context.Background(), []ge.HostTensor{x, i64T(1000)})
	require.NoError(t, err, "1000 steps of one float each: 4000 bytes of scan output")
	require.Equal(t, []int64{1000, 1}, out[1].Desc.Dims)
	_, err = m.Run(context.Background(), []ge.HostTensor{x, i64T(1100)})
	require.ErrorIs(t, err, onnx.ErrOutOfMemory)
	require.Equal(t, acl.CodeGEMemoryAllocation, acl.CodeOf(err))

	m = loadInterpCase(t, "loop_counter")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = m.Run(ctx, []ge.HostTensor{x, i64T(1 << 40)})
	require.ErrorIs(t, err, onnx.ErrCanceled)
	require.Equal(t, acl.CodeGEModelExecuteTimeout, acl.CodeOf(err))
	st := m.Stats()
	require.Zero(t, st.Staged, "a canceled run is not counted as staged")
	require.Equal(t, int64(1), st.Interpreted)
}

// TestRunIntoCompiled: RunInto of a compiled plan gives Run's outputs,
// reuses the tensors it is given, and allocates nothing in steady state.
func TestRunIntoCompiled(t *testing.T) {
	m, err := onnx.Load(symbolicMLP())
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(rand.Uint64(), 28))
	ctx := context.Background()
	var out []ge.HostTensor
	for _, n := range []int64{3, 7, 1} {
		in := []ge.HostTensor{f32T([]int64{n, 4}, randn32(r, n*4, 0))}
		want, err := m.Run(ctx, in)
		require.NoError(t, err)
		out, err = m.RunInto(ctx, in, out)
		require.NoError(t, err)
		require.Equal(t, want, out)
		if raceEnabled {
			continue
		}
		allocs := testing.AllocsPerRun(20, func() { out, err = m.RunInto(ctx, in, out) })
		require.NoError(t, err)
		require.Zero(t, allocs)
	}
	require.Zero(t, m.Stats().Interpreted)
}
