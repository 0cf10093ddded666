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
//
// -backend (or CANN_BACKEND) is auto, native or fallback like every
// example's; onnxrun runs ge models, which only the fallback executes, so
// auto is the fallback and native is refused (on the device, build an .om
// with ATC and run it with examples/doctor -backend native -model FILE.om).
// Every flag is checked before anything is imported or allocated, and the
// model's inputs and memory against the device memory the fallback
// reports, which onnxrun sizes to the host memory available (the
// fallback's device memory is host memory): a command line that cannot
// run is one error line and exit status 2.
package main

import (
	"io"
	"os"
	"strings"

	"github.com/ascend-go/cann/internal/examplecli"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func main() { os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr)) }

// mainCode is main with its arguments, output and exit status explicit.
func mainCode(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if err == nil {
		err = run(cfg, stdout)
	}
	return examplecli.Exit("onnxrun", err, stderr)
}
