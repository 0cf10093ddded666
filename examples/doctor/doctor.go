package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ascend-go/cann"
	"github.com/ascend-go/cann/acl"
	aclnative "github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/hccl"
	hcclnative "github.com/ascend-go/cann/hccl/native"
	"github.com/ascend-go/cann/internal/examplecli"
)

type config struct {
	backend string
	timeout time.Duration
	model   string // an offline model file to load and run instead of the built-in MLP
}

// run prints the report to w. It fails when the backend cannot be opened
// (for the native library: a missing required symbol, named) or a smoke
// check fails; every check still runs and prints its line first.
//
// cfg.backend is the -backend flag ("" for CANN_BACKEND, else the
// fallback); an error opening the backend names the flag or variable that
// chose it, and its advice names the flag when the flag chose.
func run(ctx context.Context, cfg config, w io.Writer) error {
	b, err := examplecli.ResolveBackend(cfg.backend)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "cann-go %s\n", cann.Version)
	picked, err := b.Open(cann.Options{})
	if err != nil {
		var ms *aclnative.MissingSymbolsError
		if errors.As(err, &ms) {
			return fmt.Errorf("%s: the AscendCL library lacks required symbols %s: %w", b.Source, strings.Join(ms.Names, ", "), errors.Unwrap(err))
		}
		return err
	}
	defer picked.Close()
	fmt.Fprintf(w, "backend: %s\n", picked.Reason)
	if nb, ok := picked.Backend.(*aclnative.Backend); ok {
		fmt.Fprintf(w, "acl library: %s\n", strings.Join(nb.Paths(), ", "))
		symbolReport(w, "acl", nb.Has, aclnative.RequiredSymbols(), aclnative.OptionalSymbols(), aclnative.ModelSymbols(), aclnative.OpSymbols())
	}
	if hb, ok := picked.HCCL.(*hcclnative.Backend); ok {
		fmt.Fprintf(w, "hccl library: %s\n", strings.Join(hb.Paths(), ", "))
		symbolReport(w, "hccl", hb.Has, hcclnative.RequiredSymbols(), hcclnative.OptionalSymbols())
	}
	rt, err := acl.Init(picked.Backend, "")
	if err != nil {
		return fmt.Errorf("aclInit: %w", err)
	}
	defer rt.Close()
	if v, err := rt.Version(); err == nil {
		fmt.Fprintf(w, "version: %d.%d.%d (aclrtGetVersion)\n", v.Major, v.Minor, v.Patch)
	} else {
		fmt.Fprintf(w, "version: unavailable (%v)\n", err)
	}
	soc := rt.SocName()
	if soc == "" {
		soc = "unavailable"
	}
	fmt.Fprintf(w, "soc: %s\n", soc)
	n, err := rt.DeviceCount()
	if err != nil {
		return fmt.Errorf("aclrtGetDeviceCount: %w", err)
	}
	fmt.Fprintf(w, "devices: %d\n", n)
	if n == 0 {
		return errors.New("no device")
	}
	return smoke(ctx, cfg, rt, picked.HCCL, n, w)
}

// symbolReport prints how many of each list are present and names the
// missing ones.
func symbolReport(w io.Writer, lib string, has func(string) bool, required []string, optional ...[]string) {
	var opt []string
	for _, l := range optional {
		opt = append(opt, l...)
	}
	for _, g := range []struct {
		kind  string
		names []string
	}{{"required", required}, {"optional", opt}} {
		var missing []string
		for _, s := range g.names {
			if !has(s) {
				missing = append(missing, s)
			}
		}
		line := fmt.Sprintf("%s symbols %s: %d/%d present", lib, g.kind, len(g.names)-len(missing), len(g.names))
		if len(missing) > 0 {
			line += "; missing: " + strings.Join(missing, ", ")
		}
		fmt.Fprintln(w, line)
	}
}

// smoke runs the checks on device 0 and prints one line each.
func smoke(ctx context.Context, cfg config, rt *acl.Runtime, hb hccl.Backend, devices int, w io.Writer) error {
	dev, err := rt.OpenDevice(0)
	if err != nil {
		return fmt.Errorf("open device 0: %w", err)
	}
	defer dev.Close()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var failed []string
	for _, c := range []struct {
		name string
		fn   func(context.Context, *acl.Device, *rand.Rand) (string, error)
	}{
		{"memory", checkMemory},
		{"streams", checkStreams},
		{"model", checkModel},
	} {
		if c.name == "model" && cfg.model != "" {
			c.fn = func(ctx context.Context, dev *acl.Device, _ *rand.Rand) (string, error) {
				return checkModelFile(ctx, dev, cfg.model)
			}
		}
		start := time.Now()
		what, err := c.fn(ctx, dev, rng)
		status := "ok"
		var skip skipError
		if errors.As(err, &skip) {
			status, what, err = "skip", skip.why, nil
		}
		if err != nil {
			status, what = "FAIL", err.Error()
			failed = append(failed, c.name)
		}
		fmt.Fprintf(tw, "smoke %s\t%s\t%v\t%s\n", c.name, status, time.Since(start).Round(time.Millisecond), what)
	}
	switch {
	case hb == nil:
		fmt.Fprintf(tw, "smoke hccl\tskip\t\tno HCCL backend\n")
	case devices < 2:
		fmt.Fprintf(tw, "smoke hccl\tskip\t\tone device\n")
	default:
		start := time.Now()
		what, err := checkHCCL(ctx, rt, hb, rng)
		status := "ok"
		if err != nil {
			status, what = "FAIL", err.Error()
			failed = append(failed, "hccl")
		}
		fmt.Fprintf(tw, "smoke hccl\t%s\t%v\t%s\n", status, time.Since(start).Round(time.Millisecond), what)
	}
	tw.Flush()
	if len(failed) > 0 {
		return fmt.Errorf("smoke test failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

// checkMemory round-trips random bytes through device memory at several
// sizes (host → device → device → host) and checks MemInfo.
func checkMemory(_ context.Context, dev *acl.Device, rng *rand.Rand) (string, error) {
	var moved uintptr
	for _, size := range []uintptr{1, 4096, 1<<20 + 3, 16 << 20} {
		a, err := dev.Malloc(size, acl.MemMallocHugeFirst)
		if err != nil {
			return "", err
		}
		b, err := dev.Malloc(size, acl.MemMallocHugeFirst)
		if err != nil {
			a.Close()
			return "", err
		}
		src := make([]byte, size)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		dst := make([]byte, size)
		err = errors.Join(a.CopyFromHost(src), b.CopyFrom(a), b.CopyToHost(dst))
		a.Close()
		b.Close()
		if err != nil {
			return "", err
		}
		if !bytes.Equal(src, dst) {
			return "", fmt.Errorf("%d bytes came back different", size)
		}
		moved += size
	}
	free, total, err := dev.MemInfo(acl.HBMMem)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d bytes round-tripped; HBM %d MiB free of %d MiB", moved, free>>20, total>>20), nil
}

// checkStreams queues copies on two streams ordered by an event and checks
// the bytes after waiting (bounded by ctx).
func checkStreams(ctx context.Context, dev *acl.Device, rng *rand.Rand) (string, error) {
	const size = 1 << 20
	s1, err := dev.NewStream()
	if err != nil {
		return "", err
	}
	defer s1.Close()
	s2, err := dev.NewStream()
	if err != nil {
		return "", err
	}
	defer s2.Close()
	ev, err := dev.NewEvent(0)
	if err != nil {
		return "", err
	}
	defer ev.Close()
	h, err := dev.MallocHost(size)
	if err != nil {
		return "", err
	}
	defer h.Close()
	back, err := dev.MallocHost(size)
	if err != nil {
		return "", err
	}
	defer back.Close()
	d, err := dev.Malloc(size, acl.MemMallocHugeFirst)
	if err != nil {
		return "", err
	}
	defer d.Close()
	for i := range h.Bytes() {
		h.Bytes()[i] = byte(rng.Uint32())
	}
	if err := errors.Join(d.CopyFromHostAsync(h, s1), ev.Record(s1), s2.WaitEvent(ev), d.CopyToHostAsync(back, s2)); err != nil {
		return "", err
	}
	if err := errors.Join(s1.Wait(ctx), s2.Wait(ctx)); err != nil {
		return "", err
	}
	if !bytes.Equal(h.Bytes(), back.Bytes()) {
		return "", errors.New("bytes copied across two streams differ")
	}
	return "2 streams, 1 event, 1 MiB each way", nil
}

// checkModel compiles a small MLP, loads and runs it, and compares the
// output with the reference interpreter. A runtime that refuses the SDK's
// model format (a real CANN runtime takes offline .om models) is reported
// as such.
func checkModel(ctx context.Context, dev *acl.Device, rng *rand.Rand) (string, error) {
	g := getest.MLP(rng, acl.Float32, 8, 64, 32, 16)
	m, err := ge.Compile(g)
	if err != nil {
		return "", err
	}
	blob, err := m.MarshalBinary()
	if err != nil {
		return "", err
	}
	model, err := dev.LoadModel(blob)
	if err != nil {
		if dev.Runtime().Backend().Name() == "native" {
			// A CANN runtime takes offline .om models; the SDK's ge format
			// runs on the fallback only, so this is no fault of the runtime.
			return "", skipError{fmt.Sprintf("the runtime refuses the SDK's ge-format model (%v)", err)}
		}
		return "", err
	}
	defer model.Close()
	inputs := make([][]byte, len(m.Inputs))
	var ins, outs []acl.Memory
	for i, d := range m.Inputs {
		inputs[i] = getest.F32Bytes(getest.RandF32(rng, int(d.Size/4)))
		b, err := dev.Malloc(uintptr(d.Size), acl.MemMallocHugeFirst)
		if err != nil {
			return "", err
		}
		defer b.Close()
		if err := b.CopyFromHost(inputs[i]); err != nil {
			return "", err
		}
		ins = append(ins, b)
	}
	var outBufs []*acl.DeviceBuffer
	for _, d := range m.Outputs {
		b, err := dev.Malloc(uintptr(d.Size), acl.MemMallocHugeFirst)
		if err != nil {
			return "", err
		}
		defer b.Close()
		outs = append(outs, b)
		outBufs = append(outBufs, b)
	}
	in, err := dev.NewDatasetOf(ins...)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := dev.NewDatasetOf(outs...)
	if err != nil {
		return "", err
	}
	defer out.Close()
	s, err := dev.NewStream()
	if err != nil {
		return "", err
	}
	defer s.Close()
	const runs = 10
	for range runs {
		if err := model.ExecuteAsync(s, in, out); err != nil {
			return "", err
		}
	}
	if err := s.Wait(ctx); err != nil {
		return "", err
	}
	want, err := getest.Run(m, inputs)
	if err != nil {
		return "", err
	}
	for i, b := range outBufs {
		got := make([]byte, b.Size())
		if err := b.CopyToHost(got); err != nil {
			return "", err
		}
		if !bytes.Equal(got, want[i]) {
			return "", fmt.Errorf("output %d differs from the reference interpreter", i)
		}
	}
	return fmt.Sprintf("MLP 64→32→16, %d zero-copy runs, output equals the reference", runs), nil
}

// skipError marks a check that cannot run on this backend.
type skipError struct{ why string }

func (e skipError) Error() string { return e.why }

// checkModelFile loads the offline model at path (for a CANN runtime, an
// .om file built by ATC for this SoC) and runs it once on zero-filled
// inputs: it proves the load and execution path, not the numbers.
func checkModelFile(ctx context.Context, dev *acl.Device, path string) (string, error) {
	blob, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	model, err := dev.LoadModel(blob)
	if err != nil {
		return "", err
	}
	defer model.Close()
	desc := model.Desc()
	var ins, outs []acl.Memory
	for _, l := range []struct {
		ios []acl.IODesc
		dst *[]acl.Memory
	}{{desc.Inputs, &ins}, {desc.Outputs, &outs}} {
		for _, d := range l.ios {
			b, err := dev.Malloc(max(d.Size, 1), acl.MemMallocHugeFirst)
			if err != nil {
				return "", err
			}
			defer b.Close()
			if err := b.Memset(0); err != nil {
				return "", err
			}
			*l.dst = append(*l.dst, b)
		}
	}
	in, err := dev.NewDatasetOf(ins...)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := dev.NewDatasetOf(outs...)
	if err != nil {
		return "", err
	}
	defer out.Close()
	s, err := dev.NewStream()
	if err != nil {
		return "", err
	}
	defer s.Close()
	if err := model.ExecuteAsync(s, in, out); err != nil {
		return "", err
	}
	if err := s.Wait(ctx); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: %d inputs, %d outputs, one execution", filepath.Base(path), len(desc.Inputs), len(desc.Outputs)), nil
}
