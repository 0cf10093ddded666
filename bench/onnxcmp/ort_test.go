package onnxcmp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/onnx"
	"github.com/ascend-go/cann/zerocopy"
)

var (
	ortModels = flag.String("ortmodels", "", "regexp: BenchmarkVsORT runs only the models whose name (family/model) matches")
	ortTable  = flag.String("orttable", "", "file: BenchmarkVsORT also writes its side-by-side table here (Markdown)")
	ortPin    = flag.Bool("ortpin", true, "BenchmarkVsORT pins both sides to one CPU")
)

// ortNodeModules is where BenchmarkVsORT looks for onnxruntime-node: the
// node_modules directory named by CANN_ORT_NODE_PATH, else by
// ORT_NODE_MODULES (as ge/onnx/testdata/corpus/ref.mjs reads it), else
// /tmp/ort/node_modules (npm install --prefix /tmp/ort --ignore-scripts
// onnxruntime-node: the package ships its native library).
func ortNodeModules() string {
	for _, k := range []string{"CANN_ORT_NODE_PATH", "ORT_NODE_MODULES"} {
		if v := os.Getenv(k); v != "" {
			return strings.Split(v, string(os.PathListSeparator))[0]
		}
	}
	return "/tmp/ort/node_modules"
}

// ortServer is testdata/ort_runner.mjs running under node.
type ortServer struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Scanner
	version string
}

// startORT starts the ONNX Runtime side, or says why it cannot (no node,
// no onnxruntime-node): the caller skips.
func startORT() (*ortServer, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, errors.New("node is not on PATH")
	}
	mods := ortNodeModules()
	if _, err := os.Stat(filepath.Join(mods, "onnxruntime-node", "package.json")); err != nil {
		return nil, fmt.Errorf("onnxruntime-node is not in %s (set CANN_ORT_NODE_PATH to its node_modules directory)", mods)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "ort_runner.mjs"))
	if err != nil {
		return nil, err
	}
	s := &ortServer{cmd: exec.Command(node, script, mods)}
	s.cmd.Stderr = os.Stderr
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.out = bufio.NewScanner(stdout)
	s.out.Buffer(make([]byte, 1<<20), 64<<20)
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *ortServer) call(req, reply any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		return err
	}
	if !s.out.Scan() {
		return fmt.Errorf("onnxruntime-node exited: %v", s.out.Err())
	}
	var e struct{ Error string }
	if err := json.Unmarshal(s.out.Bytes(), &e); err != nil {
		return err
	}
	if e.Error != "" {
		return errors.New(e.Error)
	}
	return json.Unmarshal(s.out.Bytes(), reply)
}

func (s *ortServer) load(c ortCase) error {
	type in struct {
		Name string `json:"name"`
		File string `json:"file"`
	}
	req := struct {
		Op     string `json:"op"`
		Model  string `json:"model"`
		Inputs []in   `json:"inputs"`
	}{Op: "load", Model: c.model, Inputs: []in{}}
	for _, x := range c.inputs {
		req.Inputs = append(req.Inputs, in{x.name, x.file})
	}
	var r struct{ Version string }
	if err := s.call(req, &r); err != nil {
		return err
	}
	s.version = r.Version
	return nil
}

// run times n runs inside node (the pipe round trip is outside).
func (s *ortServer) run(n int) ([]time.Duration, error) {
	var r struct{ Ns []int64 }
	if err := s.call(map[string]any{"op": "run", "n": n}, &r); err != nil {
		return nil, err
	}
	d := make([]time.Duration, len(r.Ns))
	for i, v := range r.Ns {
		d[i] = time.Duration(v)
	}
	return d, nil
}

func (s *ortServer) outputs(dir string) ([]ortInput, error) {
	var r struct{ Files []string }
	if err := s.call(map[string]any{"op": "outputs", "dir": dir}, &r); err != nil {
		return nil, err
	}
	var out []ortInput
	for _, f := range r.Files {
		x, err := readNpyFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

func (s *ortServer) close() {
	_ = s.in.Close()
	_ = s.cmd.Wait()
}

// fbRunner runs one case on the fallback: a compiled plan on a fallback
// NPU with device buffers bound zero-copy (what acl users run), or, for a
// model whose import needs run-time values (If on an input), the onnx
// package's interpreted run.
type fbRunner struct {
	rt     *acl.Runtime
	bd     *zerocopy.Binding
	outs   []ge.IODesc
	interp *onnx.Model
	feeds  []ge.HostTensor
	last   []ge.HostTensor
}

func npyDataType(s string) acl.DataType {
	return map[string]acl.DataType{"float32": acl.Float32, "float16": acl.Float16, "float64": acl.Float64,
		"int64": acl.Int64, "int32": acl.Int32, "bool": acl.Bool, "uint8": acl.Uint8, "int8": acl.Int8}[s]
}

func newFbRunner(c ortCase) (*fbRunner, error) {
	data, err := os.ReadFile(c.model)
	if err != nil {
		return nil, err
	}
	m, err := onnx.Load(data, onnx.WithExternalDataDir(filepath.Dir(c.model)))
	if err != nil {
		return nil, err
	}
	mins := m.Inputs()
	if len(mins) < len(c.inputs) {
		return nil, fmt.Errorf("%d inputs given, the model has %d", len(c.inputs), len(mins))
	}
	byName := map[string]ortInput{}
	for i, x := range c.inputs {
		if x.name == "" {
			x.name = mins[i].Name
		}
		byName[x.name] = x
	}
	f := &fbRunner{}
	descs := make([]ge.TensorDesc, len(mins))
	for i, d := range mins {
		x, ok := byName[d.Name]
		if !ok {
			return nil, fmt.Errorf("no input for %q", d.Name)
		}
		descs[i] = ge.TensorDesc{DataType: npyDataType(x.dtype), Format: acl.FormatND, Dims: x.dims}
		f.feeds = append(f.feeds, ge.HostTensor{Desc: descs[i], Data: x.data})
	}
	cm, err := m.Plan(descs)
	if err != nil {
		return nil, err
	}
	if cm == nil {
		f.interp = m
		return f, nil
	}
	blob, err := cm.MarshalBinary()
	if err != nil {
		return nil, err
	}
	// Device memory sized to the model: a gigabyte per model, freed after
	// each, leaves the runtime returning pages to the OS while the next
	// model is timed.
	npu, err := fallback.New(fallback.WithDeviceMemory(uintptr(max(64<<20, 4*(cm.MemorySize+cm.WeightSize)))))
	if err != nil {
		return nil, err
	}
	if f.rt, err = acl.Init(npu, ""); err != nil {
		return nil, err
	}
	dev, err := f.rt.OpenDevice(0)
	var am *acl.Model
	if err == nil {
		am, err = dev.LoadModel(blob)
	}
	if err == nil {
		f.bd, err = zerocopy.Bind(am)
	}
	if err != nil {
		_ = f.rt.Close()
		return nil, err
	}
	for i, d := range cm.Inputs {
		x, ok := byName[d.Name]
		if !ok {
			f.close()
			return nil, fmt.Errorf("compiled input %q has no data", d.Name)
		}
		if err := f.bd.Input(i).(*acl.DeviceBuffer).CopyFromHost(x.data); err != nil {
			f.close()
			return nil, err
		}
	}
	f.outs = cm.Outputs
	return f, nil
}

func (f *fbRunner) run() error {
	if f.interp != nil {
		// RunInto reuses the last run's outputs: the steady state of a
		// caller that keeps its output tensors, as the zero-copy binding
		// does for compiled models.
		out, err := f.interp.RunInto(context.Background(), f.feeds, f.last)
		f.last = out
		return err
	}
	return f.bd.Run()
}

// outputs of the last run, as numpy dtype names and bytes.
func (f *fbRunner) outputs() ([]ortInput, error) {
	var out []ortInput
	if f.interp != nil {
		for _, t := range f.last {
			out = append(out, ortInput{dtype: npyName(t.Desc.DataType), dims: t.Desc.Dims, data: t.Data})
		}
		return out, nil
	}
	for i, d := range f.outs {
		b := make([]byte, d.Size)
		if err := f.bd.Output(i).(*acl.DeviceBuffer).CopyToHostAt(b, 0); err != nil {
			return nil, err
		}
		out = append(out, ortInput{dtype: npyName(d.DataType), dims: d.Dims, data: b})
	}
	return out, nil
}

func npyName(dt acl.DataType) string {
	for _, s := range []string{"float32", "float16", "float64", "int64", "int32", "bool", "uint8", "int8"} {
		if npyDataType(s) == dt {
			return s
		}
	}
	return dt.String()
}

func (f *fbRunner) close() {
	if f.bd != nil {
		_ = f.bd.Close()
	}
	if f.rt != nil {
		_ = f.rt.Close()
	}
}

// maxExcess is the largest |a−b| − (atol + rtol·|b|) over the elements of
// two outputs (≤ 0: they agree); +Inf for a dtype or length mismatch.
func maxExcess(a, b ortInput, rtol, atol float64) float64 {
	x, y := asFloat64(a.dtype, a.data), asFloat64(b.dtype, b.data)
	if len(x) != len(y) {
		return math.Inf(1)
	}
	worst := math.Inf(-1)
	for i := range x {
		if x[i] == y[i] || math.IsNaN(x[i]) && math.IsNaN(y[i]) {
			continue
		}
		worst = max(worst, math.Abs(x[i]-y[i])-atol-rtol*math.Abs(y[i]))
	}
	return worst
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

type ortResult struct {
	name           string
	fb, ort        time.Duration // medians
	fbMin, ortMin  time.Duration // fastest runs: the ratio least disturbed by other load
	allocs         float64
	interp         bool
	staged         bool // every interpreted run ran as compiled stages
	err            string
	excess         float64
	loadBefore, ld string
}

// BenchmarkVsORT runs every model of ge/onnx/testdata (the test CNN, the
// gonnx samples, the misc and nn_ort cases, the exporter-shaped corpus)
// on the fallback and on ONNX Runtime (onnxruntime-node, default graph
// optimizations), one thread each (GOMAXPROCS 1; one intra-op and one
// inter-op thread), alternating one run of each per iteration so both see
// the same machine load, both pinned to one CPU (-ortpin=false leaves
// them free). Per model it reports fallback_us and ort_us (the
// medians), ratio (fallback over ORT: above 1 the fallback is slower) and
// fb_allocs (Go heap allocations per fallback run after warm-up), and it
// prints the side-by-side table with the geometric mean of the ratios and
// the load average before and after. ORT's time is measured inside node,
// so the pipe between the processes is on neither side. It skips, saying
// why, when node or onnxruntime-node is absent (a development tool, never
// a dependency of the module):
//
//	cd bench/onnxcmp && go test -run '^$' -bench VsORT -benchtime 40x
//	go test -run '^$' -bench VsORT -ortmodels 'corpus/' -orttable /tmp/t.md
func BenchmarkVsORT(b *testing.B) {
	// Both sides on one CPU: node inherits the mask. Free to migrate, each
	// side's wake-up on the other's pipe write drags the other core's
	// thread over, and the model's data is left in the first core's
	// caches: up to 2.6× a small model's time, on either side.
	pinned, unpin := ", not pinned", func() {}
	if *ortPin {
		pinned, unpin = pinOneCPU()
	}
	defer unpin()
	ort, err := startORT()
	if err != nil {
		b.Skipf("ONNX Runtime comparison skipped: %v", err)
	}
	defer ort.close()
	var filter *regexp.Regexp
	if *ortModels != "" {
		if filter, err = regexp.Compile(*ortModels); err != nil {
			b.Fatal(err)
		}
	}
	cases, err := ortCases(filepath.Join("..", "..", "ge", "onnx", "testdata"), b.TempDir(), filter)
	if err != nil {
		b.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	load0 := loadAvg()
	var results []ortResult
	for _, c := range cases {
		r := ortResult{name: c.name, loadBefore: loadAvg()}
		b.Run(c.name, func(b *testing.B) {
			// Here, not only above: testing sets GOMAXPROCS to the -cpu
			// value (default: the machine's) before every sub-benchmark's
			// timed run.
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			f, err := newFbRunner(c)
			if err != nil {
				r.err = "fallback: " + err.Error()
				b.Skip(r.err)
			}
			defer f.close()
			if err := ort.load(c); err != nil {
				r.err = "ORT: " + err.Error()
				b.Skip(r.err)
			}
			for range 3 {
				if err := f.run(); err != nil {
					r.err = "fallback: " + err.Error()
					b.Skip(r.err)
				}
			}
			// Same work: outputs agree within a loose tolerance (the
			// tests hold the tight ones).
			r.excess = math.Inf(-1)
			want, err := ort.outputs(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			got, err := f.outputs()
			if err != nil {
				b.Fatal(err)
			}
			for i := range min(len(got), len(want)) {
				r.excess = max(r.excess, maxExcess(got[i], want[i], 1e-2, 1e-3))
			}
			if _, err := ort.run(3); err != nil {
				b.Fatal(err)
			}
			// Start from a settled heap: the last model's memory freed.
			runtime.GC()
			debug.FreeOSMemory()
			var tf, to []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if err := f.run(); err != nil {
					b.Fatal(err)
				}
				tf = append(tf, time.Since(t0))
				d, err := ort.run(1)
				if err != nil {
					b.Fatal(err)
				}
				to = append(to, d...)
			}
			r.fb, r.ort, r.interp = median(tf), median(to), f.interp != nil
			if r.interp {
				st := f.interp.Stats()
				r.staged = st.Staged == st.Interpreted
			}
			r.fbMin, r.ortMin = slices.Min(tf), slices.Min(to)
			r.allocs = testing.AllocsPerRun(5, func() { _ = f.run() })
			b.ReportMetric(float64(r.fb.Nanoseconds())/1e3, "fallback_us")
			b.ReportMetric(float64(r.ort.Nanoseconds())/1e3, "ort_us")
			b.ReportMetric(float64(r.fb)/float64(r.ort), "ratio")
			b.ReportMetric(float64(r.fbMin)/float64(r.ortMin), "min_ratio")
			b.ReportMetric(r.allocs, "fb_allocs")
		})
		r.ld = loadAvg()
		results = append(results, r)
	}
	table := ortTableText(results, ort.version+pinned, load0, loadAvg())
	fmt.Print(table)
	if *ortTable != "" {
		if err := os.WriteFile(*ortTable, []byte(table), 0o644); err != nil {
			b.Error(err)
		}
	}
}

// ortTableText is the side-by-side table: per model both medians, the
// ratio, the fallback's allocations per run and the load average (1, 5,
// 15 min) after the model; then the geometric mean and the worst ratios.
func ortTableText(rs []ortResult, version, load0, load1 string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nfallback vs ONNX Runtime %s, one thread each (GOMAXPROCS 1; intra/inter-op 1), alternating runs, medians\n", version)
	fmt.Fprintf(&sb, "load average before %s, after %s; %d CPUs\n\n", load0, load1, runtime.NumCPU())
	sb.WriteString("| model | fallback µs | ORT µs | fallback/ORT | fastest-run ratio | allocs/run | note |\n|---|---:|---:|---:|---:|---:|---|\n")
	var logSum, logMin float64
	var n, over int
	var ratios []float64
	for _, r := range rs {
		if r.err != "" {
			fmt.Fprintf(&sb, "| %s | | | | | | skipped: %s |\n", r.name, strings.ReplaceAll(r.err, "|", "/"))
			continue
		}
		if r.fb == 0 {
			continue
		}
		ratio := float64(r.fb) / float64(r.ort)
		var note []string
		if r.interp && r.staged {
			note = append(note, "interpreted: staged")
		} else if r.interp {
			note = append(note, "interpreted: node by node")
		}
		if r.excess > 0 {
			note = append(note, fmt.Sprintf("outputs differ by %.3g beyond rtol 1e-2 atol 1e-3", r.excess))
		}
		note = append(note, "load "+r.ld)
		minRatio := float64(r.fbMin) / float64(r.ortMin)
		fmt.Fprintf(&sb, "| %s | %.1f | %.1f | %.2f | %.2f | %.0f | %s |\n", r.name, us(r.fb), us(r.ort), ratio, minRatio, r.allocs, strings.Join(note, "; "))
		logSum += math.Log(ratio)
		logMin += math.Log(minRatio)
		ratios = append(ratios, ratio)
		n++
		if ratio > 1.3 {
			over++
		}
	}
	if n > 0 {
		sort.Float64s(ratios)
		fmt.Fprintf(&sb, "\n%d models: geometric mean fallback/ORT %.2f (fastest runs %.2f), median %.2f, worst %.2f; %d above 1.3\n",
			n, math.Exp(logSum/float64(n)), math.Exp(logMin/float64(n)), ratios[len(ratios)/2], ratios[len(ratios)-1], over)
	}
	return sb.String()
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
