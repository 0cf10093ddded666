package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/onnx"
)

// parseGears reads -batch "1,2,4,8".
func parseGears(s string) ([]int, error) {
	var gears []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("-batch %q: want comma-separated batch sizes ≥ 1", s)
		}
		gears = append(gears, v)
	}
	return gears, nil
}

// runBatch imports the model with batch gears (as ATC's
// --dynamic_batch_size does), loads it once as a dynamic-batch model and
// runs every gear in turn: it chooses the gear with
// Model.SetDynamicBatchSize, feeds seeded random rows, and prints each
// output's gear shape and checksum and the gear's latency percentiles.
// With -out, output NAME of gear B is written as NAME_bB.npy.
func runBatch(cfg config, w io.Writer, data []byte, opts []onnx.Option) error {
	gears, err := parseGears(cfg.batch)
	if err != nil {
		return err
	}
	if len(cfg.inputs) > 0 {
		return fmt.Errorf("-input is not supported with -batch: each gear gets seeded random rows")
	}
	bm, err := onnx.CompileBatch(data, append(opts, onnx.WithDynamicBatch(gears))...)
	if err != nil {
		return err
	}
	blob, err := bm.MarshalBinary()
	if err != nil {
		return err
	}
	var size int64
	for _, g := range bm.Gears {
		size += g.Model.MemorySize + g.Model.WeightSize
	}
	se, err := openSession(blob, size)
	if err != nil {
		return err
	}
	defer se.Close()
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
