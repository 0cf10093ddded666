// Command onnxrun loads an ONNX model on the host-memory NPU (the
// fallback), feeds it seeded random inputs or NumPy files, and prints the
// output shapes and checksums, per-op times and latency percentiles.
//
//	go run ./examples/onnxrun -model model.onnx
//	go run ./examples/onnxrun -model model.onnx -input image=x.npy -out outdir
//	go run ./examples/onnxrun -model mlp.onnx -shape data_input=4,3
//	go run ./examples/onnxrun -model mlp.onnx -batch 1,2,4,8
//
// Random inputs are seeded (-seed): floats are standard normal; an integer
// input that indexes something (Gather indices) gets values inside the
// indexed dim, other integers small non-negative values; bools are random.
// -input NAME=FILE.npy (repeatable) reads little-endian float32, float16,
// int64, int32 or bool arrays. Each output is written to -out DIR as
// NAME.npy. Per-op times come from one run of the same kernels on the
// host reference interpreter (ge/getest), grouped by op type.
// -deviceprofile FILE writes the device time of every task of the timed
// runs as a pprof profile: go tool pprof -top FILE lists ops by time.
// -batch B,B,... imports a model whose inputs have a symbolic batch dim
// with those batch gears (ATC's --dynamic_batch_size), loads it once and
// runs every gear, chosen with Model.SetDynamicBatchSize.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	var cfg config
	flag.StringVar(&cfg.model, "model", "", "ONNX model file (required)")
	flag.Var(&cfg.inputs, "input", "NAME=FILE.npy: feed this input from a NumPy file (repeatable)")
	flag.Var(&cfg.shapes, "shape", "NAME=D,D,...: fix the dims of an input with symbolic dims (repeatable)")
	flag.StringVar(&cfg.out, "out", "", "directory to write each output as NAME.npy")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the random inputs")
	flag.IntVar(&cfg.runs, "runs", 50, "timed runs for the latency percentiles")
	flag.StringVar(&cfg.deviceProfile, "deviceprofile", "", "write the fallback's device-time profile of the timed runs to this file (go tool pprof -top FILE)")
	flag.StringVar(&cfg.batch, "batch", "", "B,B,...: import with these batch gears (ATC's --dynamic_batch_size; the inputs' dim 0 must be symbolic) and run each gear")
	flag.Parse()
	if cfg.model == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "onnxrun:", err)
		os.Exit(1)
	}
}
