package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/onnx"
	"github.com/ascend-go/cann/zerocopy"
)

// maxDynamicOutput bounds the device buffer of an output whose size only
// a run fixes.
const maxDynamicOutput = 64 << 20

// runDynamic runs a model whose shapes or control flow depend on its input
// values: the ONNX bytes load on the fallback as a model with unknown dims
// (as ATC keeps -1), each input's shape goes with the run
// (aclmdlSetDatasetTensorDesc) and each output's real shape comes back
// with it (aclmdlGetDatasetTensorDesc). There is no compiled plan to time
// per op: each run is interpreted.
func runDynamic(cfg config, w io.Writer, se *session, data []byte, lm *onnx.Model, files map[string]npyFile, shapes map[string][]int64) error {
	rng := rand.New(rand.NewPCG(cfg.seed, 0x6f6e6e78))
	ins := lm.Inputs()
	type feed struct {
		dims []int64
		data []byte
	}
	feeds := make([]feed, len(ins))
	var total int64
	for i, in := range ins {
		if f, ok := files[in.Name]; ok {
			if s, fixed := shapes[in.Name]; fixed && !equalDims(s, f.dims) {
				return fmt.Errorf("-input %s: %s is %s%v, -shape says %v", in.Name, f.path, f.dt, f.dims, s)
			}
			if f.dt != in.DataType {
				return fmt.Errorf("-input %s: %s is %s, the model wants %s", in.Name, f.path, f.dt, in.DataType)
			}
			feeds[i] = feed{f.dims, f.data}
			delete(files, in.Name)
		} else {
			dims := shapes[in.Name]
			if dims == nil {
				dims = append([]int64(nil), in.Dims...)
				for k := range dims {
					dims[k] = max(dims[k], 1)
				}
			}
			d := ge.IODesc{Name: in.Name, DataType: in.DataType, Dims: dims, Size: ge.TensorDesc{DataType: in.DataType, Dims: dims}.Size()}
			feeds[i] = feed{dims, randomInput(rng, d, 0)}
		}
		total += int64(len(feeds[i].data))
	}
	for name := range files {
		return fmt.Errorf("-input %s: the model has no such input", name)
	}
	if err := se.fits("the model's inputs and outputs (-input, -shape)", total+maxDynamicOutput*int64(len(lm.Outputs())), total); err != nil {
		return err
	}
	if err := se.load(data); err != nil {
		return err
	}
	bd, err := zerocopy.Bind(se.m, zerocopy.WithMaxBytes(maxDynamicOutput))
	if err != nil {
		return err
	}
	defer bd.Close()
	for i, f := range feeds {
		if err := bd.Input(i).(*acl.DeviceBuffer).CopyFromHost(f.data); err != nil {
			return err
		}
		if err := bd.SetInputShape(i, f.dims); err != nil {
			return err
		}
	}
	if err := bd.Run(); err != nil {
		return err
	}
	outs := lm.Outputs()
	fmt.Fprintf(w, "model %s: %d inputs, %d outputs, shapes fixed per run (interpreted: its shapes depend on its input values)\n", cfg.model, len(ins), len(outs))
	for i, o := range outs {
		dims, err := bd.OutputShape(i)
		if err != nil {
			return err
		}
		n := ge.TensorDesc{DataType: o.DataType, Dims: dims}.Size()
		out := make([]byte, n)
		if err := bd.Output(i).(*acl.DeviceBuffer).CopyToHostAt(out, 0); err != nil {
			return err
		}
		fmt.Fprintf(w, "output %-20q %s%v  checksum %s\n", o.Name, shortType(o.DataType), dims, checksum(o.DataType, out))
		if cfg.out != "" {
			if err := writeOutput(cfg.out, o.Name, o.DataType, dims, out); err != nil {
				return err
			}
		}
	}
	lat := make([]time.Duration, cfg.runs)
	for i := range lat {
		t0 := time.Now()
		if err := bd.Run(); err != nil {
			return err
		}
		lat[i] = time.Since(t0)
	}
	printLatency(w, lat)
	return nil
}

// writeOutput writes one output as DIR/NAME.npy.
func writeOutput(dir, name string, dt acl.DataType, dims []int64, b []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, safeName(name)+".npy"))
	if err != nil {
		return err
	}
	err = writeNpy(f, dt, dims, b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// printLatency prints the percentiles of whole runs.
func printLatency(w io.Writer, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) time.Duration {
		return lat[min(len(lat)-1, int(q*float64(len(lat))))].Round(time.Microsecond)
	}
	fmt.Fprintf(w, "latency over %d runs: p50 %s  p90 %s  p99 %s  max %s\n", len(lat), p(0.5), p(0.9), p(0.99), lat[len(lat)-1].Round(time.Microsecond))
}
