package acl_test

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/internal/npuhook"
)

// This file holds the setup the acl tests share, so that each test states
// only what it varies: open (a Runtime and device 0 on a fresh fallback
// NPU), newRig (that, plus a stream and the test model loaded with its IO),
// and the helpers that hold a stream and bound a wait.

// open returns a Runtime on a fresh fallback NPU and its device 0, all
// closed when the test ends.
func open(t testing.TB, opts ...fallback.Option) (*fallback.NPU, *acl.Runtime, *acl.Device) {
	t.Helper()
	npu, err := fallback.New(opts...)
	require.NoError(t, err)
	rt, d := openOn(t, npu)
	return npu, rt, d
}

// openOn initializes acl on be (a fallback NPU, or one wrapped to hide or
// record part of it) and opens device 0; the Runtime, and with it every
// handle, is closed when the test ends.
func openOn(t testing.TB, be acl.Backend) (*acl.Runtime, *acl.Device) {
	t.Helper()
	rt, err := acl.Init(be, "")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, rt.Close()) })
	d, err := rt.OpenDevice(0)
	require.NoError(t, err)
	return rt, d
}

// openTwo is open on an NPU of two devices, both opened.
func openTwo(t testing.TB) (*fallback.NPU, *acl.Device, *acl.Device) {
	t.Helper()
	npu, rt, d0 := open(t, fallback.WithDevices(2))
	d1, err := rt.OpenDevice(1)
	require.NoError(t, err)
	return npu, d0, d1
}

// openStream is open with one stream on device 0.
func openStream(t testing.TB, opts ...fallback.Option) (*fallback.NPU, *acl.Device, *acl.Stream) {
	t.Helper()
	npu, _, d := open(t, opts...)
	st, err := d.NewStream()
	require.NoError(t, err)
	return npu, d, st
}

// rig is the setup of the tests that run the test model: a fresh fallback
// NPU with its Runtime and device 0, one stream, a random source (its seed
// logged), the test model loaded on the device and one pair of IO datasets
// for it. The Runtime's Close at the end of the test closes all of it.
type rig struct {
	npu *fallback.NPU
	d   *acl.Device
	d1  *acl.Device // device 1, with twoDevices; nil otherwise
	st  *acl.Stream
	rng *rand.Rand
	p   *mlpModel
	m   *acl.Model // nil with unloaded
	v   *io
}

type rigConfig struct {
	m, k, h, n int
	twoDevices bool
	load       bool
}

// rigOption changes what newRig sets up.
type rigOption func(*rigConfig)

// mlp sets the test model's sizes (getest.NewTwoIO): m rows, k inputs, h
// hidden units, n outputs. The default is 4, 8, 8, 4.
func mlp(m, k, h, n int) rigOption {
	return func(c *rigConfig) { c.m, c.k, c.h, c.n = m, k, h, n }
}

// twoDevices gives the NPU a second device, opened as rig.d1, for the tests
// that use handles of another Device.
func twoDevices() rigOption { return func(c *rigConfig) { c.twoDevices = true } }

// unloaded leaves the model to the test, which loads it its own way.
func unloaded() rigOption { return func(c *rigConfig) { c.load = false } }

func newRig(t testing.TB, opts ...rigOption) *rig {
	t.Helper()
	c := rigConfig{m: 4, k: 8, h: 8, n: 4, load: true}
	for _, o := range opts {
		o(&c)
	}
	r := &rig{}
	if c.twoDevices {
		r.npu, r.d, r.d1 = openTwo(t)
	} else {
		r.npu, _, r.d = open(t)
	}
	var err error
	r.st, err = r.d.NewStream()
	require.NoError(t, err)
	r.rng = newRand(t)
	r.p = newMLPModel(t, r.rng, c.m, c.k, c.h, c.n)
	if c.load {
		r.m, err = r.d.LoadModel(r.p.Blob)
		require.NoError(t, err)
	}
	r.v = newIO(t, r.d, r.p)
	return r
}

func newRand(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// mlpModel is the shared two-input, two-output test model (getest.TwoIO).
type mlpModel = getest.TwoIO

func newMLPModel(t testing.TB, rng *rand.Rand, m, k, h, n int) *mlpModel {
	t.Helper()
	p, err := getest.NewTwoIO(rng, m, k, h, n)
	require.NoError(t, err)
	return p
}

// io is one set of device buffers and datasets for the test model.
type io struct {
	in, out         []*acl.DeviceBuffer
	inDS, outDS     *acl.Dataset
	x, b            []float32
	wantY, wantZ    []float64
	outMems, inMems []acl.Memory
}

func newIO(t testing.TB, d *acl.Device, p *mlpModel) *io {
	t.Helper()
	v := &io{}
	for _, n := range p.InSizes() {
		buf := devMem(t, d, n)
		v.in = append(v.in, buf)
		v.inMems = append(v.inMems, buf)
	}
	for _, n := range p.OutSizes() {
		buf := devMem(t, d, n)
		v.out = append(v.out, buf)
		v.outMems = append(v.outMems, buf)
	}
	var err error
	v.inDS, err = d.NewDatasetOf(v.inMems...)
	require.NoError(t, err)
	v.outDS, err = d.NewDatasetOf(v.outMems...)
	require.NoError(t, err)
	return v
}

// fill writes fresh random inputs and computes the expected outputs.
func (v *io) fill(t testing.TB, rng *rand.Rand, p *mlpModel) {
	t.Helper()
	v.x, v.b = getest.RandF32(rng, p.M*p.K), getest.RandF32(rng, p.M*p.N)
	require.NoError(t, v.in[0].CopyFromHost(getest.F32Bytes(v.x)))
	require.NoError(t, v.in[1].CopyFromHost(getest.F32Bytes(v.b)))
	v.wantY, v.wantZ = p.Ref(v.x, v.b)
}

// check reads both outputs back and compares them with the reference.
func (v *io) check(t testing.TB) {
	t.Helper()
	y := make([]byte, v.out[0].Size())
	z := make([]byte, v.out[1].Size())
	require.NoError(t, v.out[0].CopyToHost(y))
	require.NoError(t, v.out[1].CopyToHost(z))
	requireClose(t, v.wantY, getest.BytesF32(y), "y")
	requireClose(t, v.wantZ, getest.BytesF32(z), "z")
}

// requireClose compares float32 results with a float64 reference.
func requireClose(t testing.TB, want []float64, got []float32, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		tol := 1e-4 * (1 + math.Abs(want[i]))
		if math.Abs(float64(got[i])-want[i]) > tol {
			require.Failf(t, "mismatch", "%s[%d] = %g, want %g", what, i, got[i], want[i])
		}
	}
}

// hold queues on st a task that blocks until the returned release is
// called (idempotent).
func hold(t testing.TB, npu *fallback.NPU, d *acl.Device, st *acl.Stream) func() {
	t.Helper()
	gate := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	require.NoError(t, d.Do(func() error {
		_, err := npuhook.Of(npu).Enqueue(st.Handle(), "hold", func() error { <-gate; return nil })
		return err
	}))
	t.Cleanup(release)
	return release
}

// mustBlock starts each f on a goroutine of its own and fails the test if
// one returns within 50 ms: each must wait for work the test releases
// afterwards. The channel delivers their results.
func mustBlock(t testing.TB, what string, fs ...func() error) <-chan error {
	t.Helper()
	done := make(chan error, len(fs))
	for _, f := range fs {
		go func() { done <- f() }()
	}
	select {
	case err := <-done:
		t.Fatalf("%s returned (%v) before the work it waits for completed", what, err)
	case <-time.After(50 * time.Millisecond):
	}
	return done
}

// within fails the test if f has not returned after d: a deadlock or hang.
// f runs on another goroutine, so it reports with assert, never require.
func within(t testing.TB, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not finish within %v", what, d)
	}
}

// devMem allocates n bytes of device memory on d (MemMallocHugeFirst).
func devMem(t testing.TB, d *acl.Device, n uintptr) *acl.DeviceBuffer {
	t.Helper()
	b, err := d.Malloc(n, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	return b
}

// hostMem allocates n bytes of pinned host memory for d.
func hostMem(t testing.TB, d *acl.Device, n uintptr) *acl.HostBuffer {
	t.Helper()
	h, err := d.MallocHost(n)
	require.NoError(t, err)
	return h
}
