package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/ascend-go/cann"
	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/internal/examplecli"
	"github.com/ascend-go/cann/zerocopy"
)

// config is what the flags set.
type config struct {
	backend                string
	iters, warmup          int
	batch, in, hidden, out int
	seed                   uint64
	deviceProfile          string // file for the fallback's device-time profile
	corrupt                bool   // tests only: damage one output value to prove the check fails
}

// tolerance is the relative error allowed between the float32 results and
// the float64 reference: far above float32 rounding over these dot
// products, far below any real mistake.
const tolerance = 2e-4

// mode is one way of binding the model's IO.
type mode struct {
	name string
	opts []zerocopy.BindOption
}

var modes = []mode{
	// Device buffers, checked strictly: a host or undersized buffer would
	// be an error, never a silent copy.
	{"zero-copy", []zerocopy.BindOption{zerocopy.WithDeviceOnly()}},
	// Pinned host buffers: the runtime copies the input in (H2D) and the
	// output out (D2H) at every run.
	{"copy", []zerocopy.BindOption{zerocopy.WithHostBuffers()}},
}

// result is what one mode measured.
type result struct {
	lat        []time.Duration // sorted
	copies     float64         // per run; NaN when the backend has no counters
	bytes      float64         // copied per run
	maxRelErr  float64
	wrong      int // output values outside the tolerance
	firstWrong int
	got, want  float64
}

// maxIters bounds -iters: each mode keeps its latencies to sort them.
const maxIters = 1_000_000

// check refuses flags that cannot run, naming the flag: a backend value
// cann.ParseMode refuses (from -backend or CANN_BACKEND), a run count
// outside [1, maxIters], a dimension below 1 or whose products overflow,
// a -deviceprofile that cannot be written. Sizes are checked against the
// device in run, once the backend is open.
func (c *config) check() error {
	if _, err := examplecli.ResolveBackend(c.backend); err != nil {
		return &examplecli.UsageError{Msg: err.Error()}
	}
	if err := examplecli.CheckRange("iters", int64(c.iters), 1, maxIters); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		v    int
	}{{"batch", c.batch}, {"in", c.in}, {"hidden", c.hidden}, {"out", c.out}} {
		if d.v < 1 {
			return examplecli.Usagef("-%s %d: must be at least 1", d.name, d.v)
		}
	}
	if _, ok := c.bytes(); !ok {
		return examplecli.Usagef("-batch %d -in %d -hidden %d -out %d: the model's sizes overflow", c.batch, c.in, c.hidden, c.out)
	}
	if c.warmup == 0 {
		c.warmup = 10
	}
	return examplecli.CheckWritableFile("deviceprofile", c.deviceProfile)
}

// bytes estimates the device memory the model takes before it is
// compiled: float32 weights and biases, the hidden activations, the
// input and output in the model's IO region and once more per binding
// mode. false when a product overflows.
func (c *config) bytes() (int64, bool) {
	b, i, h, o := int64(c.batch), int64(c.in), int64(c.hidden), int64(c.out)
	var terms []int64
	for _, f := range [][]int64{{i, h}, {h}, {h, o}, {o}, {b, h}, {3, b, i}, {3, b, o}} {
		p, ok := examplecli.Product(append(f, 4)...)
		if !ok {
			return 0, false
		}
		terms = append(terms, p)
	}
	return examplecli.Sum(terms...)
}

// run is the whole program; it writes its report to w.
func run(cfg config, w io.Writer) error {
	if err := cfg.check(); err != nil {
		return err
	}
	want, err := examplecli.ResolveBackend(cfg.backend)
	if err != nil {
		return err
	}
	var opts cann.Options
	if cfg.deviceProfile != "" {
		opts.Fallback = append(opts.Fallback, fallback.WithDeviceProfile())
	}
	picked, err := want.Open(opts)
	if err != nil {
		return fmt.Errorf("opening the backend: %w", err)
	}
	defer picked.Close()
	fmt.Fprintln(w, "backend:", picked.Reason)

	rt, err := acl.Init(picked.Backend, "")
	if err != nil {
		return err
	}
	defer rt.Close()
	dev, err := rt.OpenDevice(0)
	if err != nil {
		return err
	}
	defer dev.Close()
	// The model must fit in the device memory the backend reports before
	// its weights are drawn; the host holds the weights three times (the
	// drawn slices, the graph's constants, the serialized model), the
	// input and the float64 reference.
	need, _ := cfg.bytes()
	if err := examplecli.CheckDevice(dev, "the model at these -batch/-in/-hidden/-out", need); err != nil {
		return err
	}
	host, ok := examplecli.Product(4, need)
	if !ok {
		host = -1
	}
	if err := examplecli.CheckHost("the model at these -batch/-in/-hidden/-out", host); err != nil {
		return err
	}

	seed := cfg.seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	fmt.Fprintln(w, "seed:", seed)
	net := newMLP(rng, cfg.batch, cfg.in, cfg.hidden, cfg.out)

	// Build and compile the graph, then serialize the model.
	compiled, err := ge.Compile(net.graph())
	if err != nil {
		return fmt.Errorf("compiling: %w", err)
	}
	blob, err := compiled.MarshalBinary()
	if err != nil {
		return err
	}

	// Ask the runtime what the model needs, allocate it ourselves and load
	// the model into it.
	workSize, weightSize, err := dev.QueryModelSize(blob)
	if err != nil {
		return err
	}
	ioSize := 4 * int64(net.B*net.I+net.B*net.O)
	if err := examplecli.CheckDevice(dev, "the compiled model's work, weights and IO", int64(workSize+weightSize)+2*ioSize); err != nil {
		return err
	}
	work, err := allocOrNil(dev, workSize)
	if err != nil {
		return fmt.Errorf("work memory: %w", err)
	}
	defer work.Close()
	weight, err := allocOrNil(dev, weightSize)
	if err != nil {
		return fmt.Errorf("weight memory: %w", err)
	}
	defer weight.Close()
	model, err := dev.LoadModelWithMem(blob, work, weight)
	if err != nil {
		if picked.Mode == cann.Native {
			return fmt.Errorf("loading the model: %w (the model is in the ge format; a runtime that takes only offline .om models refuses it)", err)
		}
		return fmt.Errorf("loading the model: %w", err)
	}
	defer model.Close()
	desc := model.Desc()
	fmt.Fprintf(w, "model: %s %v → relu(%d) → %s %v  (%s; %d tasks; work %s, weights %s, caller-owned)\n",
		desc.Inputs[0].Name, desc.Inputs[0].Dims, net.H, desc.Outputs[0].Name, desc.Outputs[0].Dims,
		desc.Inputs[0].DataType, len(compiled.Tasks), size(workSize), size(weightSize))

	st, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()

	x := randF32(rng, net.B*net.I, 1)
	ref := net.ref(x)
	results, err := measure(cfg, picked.Backend, model, st, x, ref)
	if err != nil {
		return err
	}
	report(w, cfg, results)

	var bad []error
	for i, r := range results {
		if r.wrong > 0 {
			bad = append(bad, fmt.Errorf("%s mode: %d of %d outputs wrong (first y[%d] = %g, want %g)",
				modes[i].name, r.wrong, len(ref), r.firstWrong, r.got, r.want))
		}
	}
	if err := errors.Join(bad...); err != nil {
		fmt.Fprintln(w, "result: WRONG")
		return err
	}
	fmt.Fprintln(w, "result: OK, both modes match the float64 reference")
	return writeDeviceProfile(w, cfg.deviceProfile, picked.Backend)
}

// writeDeviceProfile writes the fallback's device-time profile (every task
// of every run) for go tool pprof; the native library keeps none.
func writeDeviceProfile(w io.Writer, path string, be acl.Backend) error {
	if path == "" {
		return nil
	}
	npu, ok := be.(*fallback.NPU)
	if !ok {
		fmt.Fprintln(w, "device profile: n/a (only the fallback records one)")
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = npu.WriteDeviceProfile(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		fmt.Fprintf(w, "device profile: %s (go tool pprof -top %s)\n", path, path)
	}
	return err
}

// allocOrNil allocates n bytes of device memory; nil (left to the
// runtime) when the model needs none.
func allocOrNil(dev *acl.Device, n uintptr) (*acl.DeviceBuffer, error) {
	if n == 0 {
		return nil, nil
	}
	return dev.Malloc(n, acl.MemMallocHugeFirst)
}

// measure binds the model's IO once per mode, writes x, runs the model
// cfg.iters times per mode (each run queued with RunAsync and waited for;
// the modes alternate, so that a busy machine slows both alike), and
// checks each mode's last output against want.
func measure(cfg config, be acl.Backend, m *acl.Model, st *acl.Stream, x []float32, want []float64) ([]result, error) {
	rs := make([]result, len(modes))
	bs := make([]*zerocopy.Binding, len(modes))
	defer func() {
		for _, b := range bs {
			if b != nil {
				b.Close()
			}
		}
	}()
	for i, md := range modes {
		b, err := zerocopy.Bind(m, md.opts...)
		if err != nil {
			return nil, fmt.Errorf("%s mode: %w", md.name, err)
		}
		bs[i] = b
		if err := store(b.Input(0), f32Bytes(x)); err != nil {
			return nil, err
		}
		// Clear the output, so a run that writes nothing cannot pass.
		if err := store(b.Output(0), make([]byte, b.Output(0).Size())); err != nil {
			return nil, err
		}
		rs[i].lat = make([]time.Duration, 0, cfg.iters)
	}
	once := func(b *zerocopy.Binding) error {
		if err := b.RunAsync(st); err != nil {
			return err
		}
		return st.Synchronize()
	}
	for range cfg.warmup {
		for i, b := range bs {
			if err := once(b); err != nil {
				return nil, fmt.Errorf("%s mode: %w", modes[i].name, err)
			}
		}
	}
	// The copy counters are read around each run: the modes alternate.
	copies, bytes := make([]uint64, len(modes)), make([]uint64, len(modes))
	for range cfg.iters {
		for i, b := range bs {
			before, _ := copyCounters(be)
			t0 := time.Now()
			if err := once(b); err != nil {
				return nil, fmt.Errorf("%s mode: %w", modes[i].name, err)
			}
			rs[i].lat = append(rs[i].lat, time.Since(t0))
			after, _ := copyCounters(be)
			copies[i] += after.Copies - before.Copies
			bytes[i] += after.Bytes - before.Bytes
		}
	}
	_, counted := copyCounters(be)
	for i, b := range bs {
		r := &rs[i]
		slices.Sort(r.lat)
		r.copies, r.bytes = math.NaN(), math.NaN()
		if counted {
			r.copies = float64(copies[i]) / float64(cfg.iters)
			r.bytes = float64(bytes[i]) / float64(cfg.iters)
		}
		out, err := load(b.Output(0), 4*len(want))
		if err != nil {
			return nil, err
		}
		got := bytesF32(out)
		if cfg.corrupt {
			got[len(got)/2] += 1
		}
		for j := range want {
			e := math.Abs(float64(got[j])-want[j]) / (1 + math.Abs(want[j]))
			r.maxRelErr = max(r.maxRelErr, e)
			if !(e <= tolerance) { // NaN counts as wrong
				if r.wrong == 0 {
					r.firstWrong, r.got, r.want = j, float64(got[j]), want[j]
				}
				r.wrong++
			}
		}
	}
	return rs, nil
}

// copyCounters reads the fallback's copy counters (H2D, D2H and D2D; the
// runtime makes no others for model IO); false on a backend without them.
func copyCounters(be acl.Backend) (fallback.Traffic, bool) {
	c, ok := be.(interface{ Counters() fallback.Counters })
	if !ok {
		return fallback.Traffic{}, false
	}
	k := c.Counters()
	var t fallback.Traffic
	for _, d := range []fallback.Traffic{k.H2D, k.D2H, k.D2D} {
		t.Copies += d.Copies
		t.Bytes += d.Bytes
	}
	return t, true
}

// store writes b at the start of device or pinned host memory.
func store(mm acl.Memory, b []byte) error {
	switch v := mm.(type) {
	case *acl.DeviceBuffer:
		return v.CopyFromHost(b)
	case *acl.HostBuffer:
		copy(v.Bytes(), b)
		return nil
	}
	return fmt.Errorf("unexpected memory %T", mm)
}

// load reads the first n bytes of device or pinned host memory.
func load(mm acl.Memory, n int) ([]byte, error) {
	out := make([]byte, n)
	switch v := mm.(type) {
	case *acl.DeviceBuffer:
		return out, v.CopyToHostAt(out, 0)
	case *acl.HostBuffer:
		copy(out, v.Bytes())
		return out, nil
	}
	return nil, fmt.Errorf("unexpected memory %T", mm)
}
