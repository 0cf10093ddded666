package main

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/ge/onnx"
	"github.com/ascend-go/cann/internal/examplecli"
	"github.com/ascend-go/cann/zerocopy"
)

type config struct {
	model          string
	inputs, shapes multi
	out            string
	seed           uint64
	runs           int
	deviceProfile  string
	batch          string // -batch gears: a dynamic-batch import
	backend        string // -backend (check resolves it with CANN_BACKEND)
}

func run(cfg config, w io.Writer) error {
	shapes, err := parseShapes(cfg.shapes)
	if err != nil {
		return err
	}
	var opts []onnx.Option
	for _, s := range cfg.shapes { // in flag order
		name, _, _ := strings.Cut(s, "=")
		opts = append(opts, onnx.WithInputShape(name, shapes[name]))
	}
	data, err := os.ReadFile(cfg.model)
	if err != nil {
		return err
	}
	opts = append(opts, onnx.WithExternalDataDir(filepath.Dir(cfg.model)))
	se, err := openSession(cfg)
	if err != nil {
		return err
	}
	defer se.Close()
	if cfg.batch != "" {
		return runBatch(cfg, w, se, data, opts, shapes)
	}
	files := map[string]npyFile{}
	for _, s := range cfg.inputs {
		name, file, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("-input %q: want NAME=FILE.npy", s)
		}
		dt, dims, b, err := readNpy(file)
		if err != nil {
			return err
		}
		files[name] = npyFile{file, dt, dims, b}
	}
	// Each input's shape: its -input file's, else -shape's, else the
	// model's with every symbolic dim 1 (said on w).
	lm, err := onnx.Load(data, onnx.WithExternalDataDir(filepath.Dir(cfg.model)))
	if err != nil {
		return flagHint(err)
	}
	var inTypes []acl.DataType
	var inDims [][]int64
	for _, in := range lm.Inputs() {
		if s, ok := shapes[in.Name]; ok {
			if !fits(s, in.Dims) {
				return examplecli.Usagef("-shape %s=%s: the model's input is %s%v (-1: any)", in.Name, joinDims(s), in.DataType, in.Dims)
			}
			inTypes, inDims = append(inTypes, in.DataType), append(inDims, s)
			continue
		}
		if f, ok := files[in.Name]; ok {
			if !fits(f.dims, in.Dims) {
				return examplecli.Usagef("-input %s: %s is %s%v, the model wants %s%v (-1: any)", in.Name, f.path, f.dt, f.dims, in.DataType, in.Dims)
			}
			opts = append(opts, onnx.WithInputShape(in.Name, f.dims))
			inTypes, inDims = append(inTypes, in.DataType), append(inDims, f.dims)
			continue
		}
		dims := append([]int64(nil), in.Dims...)
		var syms []string
		for k, d := range dims {
			if d < 0 {
				dims[k] = 1
				syms = append(syms, fmt.Sprintf("dim %d (%s)", k, cmp.Or(in.Symbols[k], "?")))
			}
		}
		if len(syms) > 0 {
			fmt.Fprintf(w, "input %q: symbolic %s set to 1 (give -shape %s=D,... or -input %s=FILE.npy)\n", in.Name, strings.Join(syms, ", "), in.Name, in.Name)
			opts = append(opts, onnx.WithInputShape(in.Name, dims))
		}
		inTypes, inDims = append(inTypes, in.DataType), append(inDims, dims)
	}
	// The inputs at these shapes must fit before the import plans them.
	in, elems, ok := inputBytes(inTypes, inDims)
	if !ok {
		return examplecli.Usagef("the inputs' sizes at these shapes overflow (-shape, -input)")
	}
	if err := se.fits("the model's inputs at these shapes (-shape, -input)", in, in+hostTemp(elems)); err != nil {
		return err
	}
	g, err := onnx.Import(data, opts...)
	if needsValues(err) {
		return runDynamic(cfg, w, se, data, lm, files, shapes)
	}
	if err != nil {
		return flagHint(err)
	}
	m, err := ge.Compile(g)
	if err != nil {
		return err
	}
	// The device holds the model's memory, weights and IO buffers; the
	// host the inputs and outputs, the reference interpreter's copy of
	// the model memory and randomInput's scratch.
	var maxIn int64
	for _, d := range m.Inputs {
		maxIn = max(maxIn, d.Size/int64(max(d.DataType.Size(), 1))) // elements
	}
	dev := m.MemorySize + m.WeightSize + ioBytes(m)
	if err := se.fits("the model (work, weights and IO)", dev, m.MemorySize+m.WeightSize+2*ioBytes(m)+hostTemp(maxIn)); err != nil {
		return err
	}
	bounds := indexBounds(g)
	rng := rand.New(rand.NewPCG(cfg.seed, 0x6f6e6e78))
	inputs := make([][]byte, len(m.Inputs))
	for i, d := range m.Inputs {
		if f, ok := files[d.Name]; ok {
			if f.dt != d.DataType || !equalDims(f.dims, d.Dims) {
				return fmt.Errorf("-input %s: %s is %s%v, the model wants %s%v", d.Name, f.path, f.dt, f.dims, d.DataType, d.Dims)
			}
			inputs[i] = f.data
			delete(files, d.Name)
			continue
		}
		inputs[i] = randomInput(rng, d, bounds[d.Name])
	}
	for name := range files {
		return fmt.Errorf("-input %s: the model has no such input", name)
	}

	// Load on the fallback, bind device buffers zero-copy, run.
	blob, err := m.MarshalBinary()
	if err != nil {
		return err
	}
	if err := se.load(blob); err != nil {
		return err
	}
	npu := se.npu
	bd, err := zerocopy.Bind(se.m)
	if err != nil {
		return err
	}
	defer bd.Close()
	for i, in := range inputs {
		if err := bd.Input(i).(*acl.DeviceBuffer).CopyFromHost(in); err != nil {
			return err
		}
	}
	if err := bd.Run(); err != nil {
		return err
	}
	fmt.Fprintf(w, "model %s: %d inputs, %d outputs, %d tasks\n", cfg.model, len(m.Inputs), len(m.Outputs), len(m.Tasks))
	for i, d := range m.Outputs {
		out := make([]byte, d.Size)
		if err := bd.Output(i).(*acl.DeviceBuffer).CopyToHostAt(out, 0); err != nil {
			return err
		}
		fmt.Fprintf(w, "output %-20q %s%v  checksum %s\n", d.Name, shortType(d.DataType), d.Dims, checksum(d.DataType, out))
		if cfg.out != "" {
			if err := writeOutput(cfg.out, d.Name, d.DataType, d.Dims, out); err != nil {
				return err
			}
		}
	}

	// Per-op times: one run of the same kernels on the host interpreter.
	_, times, err := getest.RunTimed(m, inputs)
	if err != nil {
		return err
	}
	perOp := map[string]time.Duration{}
	count := map[string]int{}
	var total time.Duration
	for i, t := range m.Tasks {
		perOp[t.Op.String()] += times[i]
		count[t.Op.String()]++
		total += times[i]
	}
	var ops []string
	for op := range perOp {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return perOp[ops[i]] > perOp[ops[j]] })
	fmt.Fprintln(w, "per-op time (one run on the host interpreter):")
	for _, op := range ops {
		fmt.Fprintf(w, "  %-14s %3d tasks %10s %5.1f%%\n", op, count[op], perOp[op].Round(time.Microsecond), 100*float64(perOp[op])/float64(max(total, 1)))
	}

	// Latency of whole runs on the fallback.
	npu.ResetDeviceProfile()
	lat := make([]time.Duration, cfg.runs)
	for i := range lat {
		t0 := time.Now()
		if err := bd.Run(); err != nil {
			return err
		}
		lat[i] = time.Since(t0)
	}
	printLatency(w, lat)
	if cfg.deviceProfile != "" {
		f, err := os.Create(cfg.deviceProfile)
		if err != nil {
			return err
		}
		err = npu.WriteDeviceProfile(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "device profile written to %s (go tool pprof -top %s)\n", cfg.deviceProfile, cfg.deviceProfile)
	}
	return nil
}

// needsValues reports an import that a node refused because its shapes
// or control flow depend on input values (an If on data, a Loop of data
// length, NonZero): such a model loads on the fallback with its shapes
// left to each run.
func needsValues(err error) bool {
	var e *onnx.Error
	return errors.As(err, &e) && e.Op != "" && errors.Is(err, onnx.ErrDynamicShape)
}

// npyFile is an -input file read.
type npyFile struct {
	path string
	dt   acl.DataType
	dims []int64
	data []byte
}

// fits reports whether dims fill a model's dims (-1: any).
func fits(dims, model []int64) bool {
	if len(dims) != len(model) {
		return false
	}
	for i, d := range model {
		if d >= 0 && dims[i] != d {
			return false
		}
	}
	return true
}

func joinDims(d []int64) string {
	s := make([]string, len(d))
	for i, x := range d {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ",")
}

// flagHint names the flag that fixes an import refusal about shapes (the
// library's message names its Go option).
func flagHint(err error) error {
	var e *onnx.Error
	if errors.As(err, &e) && e.Op == "" && errors.Is(err, onnx.ErrDynamicShape) {
		return fmt.Errorf("%w (give the input's dims with -shape NAME=D,D,... or -input NAME=FILE.npy)", err)
	}
	return err
}

// indexBounds finds graph inputs used as Gather indices and the size of
// the dim they index.
func indexBounds(g *ge.Graph) map[string]int64 {
	b := map[string]int64{}
	for _, n := range g.Nodes() {
		if n.Op() != ge.OpGather {
			continue
		}
		in := n.Inputs()
		if len(in) != 2 || in[1].Node().Op() != ge.OpData {
			continue
		}
		p := in[0].Desc().Dims
		axis := n.Attrs().Int(ge.AttrAxis, 0)
		if axis < 0 {
			axis += int64(len(p))
		}
		if axis >= 0 && axis < int64(len(p)) {
			name := in[1].Node().Name()
			if old, ok := b[name]; !ok || p[axis] < old {
				b[name] = p[axis]
			}
		}
	}
	return b
}

func randomInput(rng *rand.Rand, d ge.IODesc, bound int64) []byte {
	n := int(d.Size) / max(d.DataType.Size(), 1)
	f := make([]float64, n)
	for i := range f {
		switch {
		case d.DataType == acl.Bool:
			f[i] = float64(rng.IntN(2))
		case d.DataType == acl.Int32 || d.DataType == acl.Int64 || d.DataType == acl.Uint8 || d.DataType == acl.Int8:
			if bound <= 0 {
				bound = 8
			}
			f[i] = float64(rng.Int64N(bound))
		default:
			f[i] = rng.NormFloat64()
		}
	}
	src := make([]byte, 8*n)
	for i, v := range f {
		binary.LittleEndian.PutUint64(src[8*i:], math.Float64bits(v))
	}
	out, err := ge.EvalOp(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(d.DataType))},
		[]ge.HostTensor{{Desc: ge.TensorDesc{DataType: acl.Float64, Dims: []int64{int64(n)}}, Data: src}})
	if err != nil {
		return make([]byte, d.Size)
	}
	return out[0].Data
}

// checksum prints the sum of the values (as float64) and an FNV-1a hash
// of the bytes.
func checksum(dt acl.DataType, b []byte) string {
	h := fnv.New64a()
	h.Write(b)
	sum := math.NaN()
	n := len(b) / max(dt.Size(), 1)
	if out, err := ge.EvalOp(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(acl.Float64))},
		[]ge.HostTensor{{Desc: ge.TensorDesc{DataType: dt, Dims: []int64{int64(n)}}, Data: b}}); err == nil {
		sum = 0
		for i := range n {
			sum += math.Float64frombits(binary.LittleEndian.Uint64(out[0].Data[8*i:]))
		}
	}
	return fmt.Sprintf("sum=%.6g fnv=%016x", sum, h.Sum64())
}

func equalDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func shortType(dt acl.DataType) string {
	return strings.ToLower(strings.TrimPrefix(dt.String(), "ACL_"))
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r == 0 {
			return '_'
		}
		return r
	}, s)
}
