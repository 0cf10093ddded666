package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/onnx"
	"github.com/ascend-go/cann/internal/examplecli"
)

// runBatch imports the model with batch gears (as ATC's
// --dynamic_batch_size does), loads it once as a dynamic-batch model and
// runs every gear in turn: it chooses the gear with
// Model.SetDynamicBatchSize, feeds seeded random rows, and prints each
// output's gear shape and checksum and the gear's latency percentiles.
// With -out, output NAME of gear B is written as NAME_bB.npy.
func runBatch(cfg config, w io.Writer, se *session, data []byte, opts []onnx.Option, shapes map[string][]int64) error {
	gears, err := parseGears(cfg.batch)
	if err != nil {
		return err
	}
	if len(cfg.inputs) > 0 {
		return examplecli.Usagef("-input is not supported with -batch: each gear gets seeded random rows")
	}
	// Every gear's inputs must fit before the gears are imported: dim 0
	// is the gear, the other dims -shape's or 1 where symbolic.
	lm, err := onnx.Load(data, onnx.WithExternalDataDir(filepath.Dir(cfg.model)))
	if err != nil {
		return flagHint(err)
	}
	var all, maxElems int64
	for _, g := range gears {
		var dts []acl.DataType
		var dims [][]int64
		for _, in := range lm.Inputs() {
			d := append([]int64(nil), in.Dims...)
			if s, ok := shapes[in.Name]; ok && len(s) == len(d) {
				copy(d, s)
			}
			for k := range d {
				if d[k] < 0 {
					d[k] = 1
				}
			}
			if len(d) > 0 {
				d[0] = int64(g)
			}
			dts, dims = append(dts, in.DataType), append(dims, d)
		}
		n, elems, ok1 := inputBytes(dts, dims)
		var ok2 bool
		if all, ok2 = examplecli.Sum(all, n); !ok1 || !ok2 {
			return examplecli.Usagef("-batch %s: the inputs' sizes overflow", cfg.batch)
		}
		maxElems = max(maxElems, elems)
	}
	if err := se.fits("the inputs of every -batch gear", all, all+hostTemp(maxElems)); err != nil {
		return err
	}
	bm, err := onnx.CompileBatch(data, append(opts, onnx.WithDynamicBatch(gears))...)
	if err != nil {
		return err
	}
	// The device holds every gear's model memory and weights and IO
	// buffers of the largest gear; the host the inputs and outputs of a
	// gear and randomInput's scratch.
	var size, ioMax, maxIn int64
	for _, g := range bm.Gears {
		size += g.Model.MemorySize + g.Model.WeightSize
		ioMax = max(ioMax, ioBytes(g.Model))
		for _, d := range g.Model.Inputs {
			maxIn = max(maxIn, d.Size/int64(max(d.DataType.Size(), 1))) // elements
		}
	}
	if err := se.fits("the gears' models (work, weights and IO)", size+ioMax, ioMax+hostTemp(maxIn)); err != nil {
		return err
	}
	blob, err := bm.MarshalBinary()
	if err != nil {
		return err
	}
	if err := se.load(blob); err != nil {
		return err
	}
	dev, m := se.dev, se.m
	desc := m.Desc()
	fmt.Fprintf(w, "model %s: dynamic batch, gears %v; inputs:", cfg.model, desc.Batches)
	for _, d := range desc.Inputs {
		fmt.Fprintf(w, " %s%v", d.Name, d.Dims)
	}
	fmt.Fprintln(w)
	mems := func(ios []acl.IODesc) ([]*acl.DeviceBuffer, *acl.Dataset, error) {
		var bufs []*acl.DeviceBuffer
		var ms []acl.Memory
		for _, d := range ios {
			b, err := dev.Malloc(d.Size, acl.MemMallocHugeFirst)
			if err != nil {
				return nil, nil, err
			}
			bufs, ms = append(bufs, b), append(ms, b)
		}
		ds, err := dev.NewDatasetOf(ms...)
		return bufs, ds, err
	}
	ins, inDS, err := mems(desc.Inputs)
	if err != nil {
		return err
	}
	outs, outDS, err := mems(desc.Outputs)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(cfg.seed, 0x6f6e6e78))
	for _, g := range bm.Gears {
		gm := g.Model
		for i, d := range gm.Inputs {
			if err := ins[i].CopyFromHostAt(0, randomInput(rng, d, 0)); err != nil {
				return err
			}
		}
		if err := m.SetDynamicBatchSize(inDS, uint64(g.Batch)); err != nil {
			return err
		}
		if err := m.Execute(inDS, outDS); err != nil {
			return err
		}
		for i, d := range gm.Outputs {
			out := make([]byte, d.Size)
			if err := outs[i].CopyToHostAt(out, 0); err != nil {
				return err
			}
			fmt.Fprintf(w, "batch %-3d output %-20q %s%v  checksum %s\n", g.Batch, d.Name, shortType(d.DataType), d.Dims, checksum(d.DataType, out))
			if cfg.out != "" {
				if err := writeOutput(cfg.out, fmt.Sprintf("%s_b%d", d.Name, g.Batch), d.DataType, d.Dims, out); err != nil {
					return err
				}
			}
		}
		lat := make([]time.Duration, cfg.runs)
		for i := range lat {
			t0 := time.Now()
			if err := m.Execute(inDS, outDS); err != nil {
				return err
			}
			lat[i] = time.Since(t0)
		}
		if len(lat) > 0 {
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			p := func(q float64) time.Duration {
				return lat[min(len(lat)-1, int(q*float64(len(lat))))].Round(time.Microsecond)
			}
			fmt.Fprintf(w, "batch %-3d latency over %d runs: p50 %s  p99 %s\n", g.Batch, len(lat), p(0.5), p(0.99))
		}
	}
	return nil
}
