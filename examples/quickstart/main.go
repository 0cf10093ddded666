// Command quickstart is the SDK's main job in one program: it builds a
// two-layer MLP with the graph engine (ge), compiles it, asks the runtime
// how much work and weight memory the model needs, allocates that memory
// itself, loads the model into it (aclmdlLoadFromMemWithMem), binds
// zero-copy inputs and outputs (zerocopy.Binding), runs the model many
// times on a stream (one aclmdlExecuteAsync per run), checks the output
// against a float64 reference computed in Go, and prints latency
// percentiles and copy counters for zero-copy mode and, beside it, copy
// mode (the same model with its IO in pinned host memory, so the runtime
// copies the input in and the output out at every run).
//
//	go run ./examples/quickstart                  # on the host-memory NPU
//	go run ./examples/quickstart -backend native  # on libascendcl
//
// Without -backend it follows CANN_BACKEND (the fallback when unset).
// Every flag is checked before the backend opens, and the model's sizes
// against the device memory the backend reports before anything is
// allocated: a command line that cannot run is one error line and exit
// status 2.
//
// The program exits with status 1 when a result is wrong or a step fails.
// Copy counters come from the fallback; the native library has none, so
// they print as n/a there. The model is serialized in the ge format, which
// the fallback executes; a native runtime that only takes offline (.om)
// models refuses it at load, and the program says so.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ascend-go/cann/internal/examplecli"
)

func main() { os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr)) }

// mainCode is main with its arguments, output and exit status explicit.
func mainCode(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if err == nil {
		err = run(cfg, stdout)
	}
	return examplecli.Exit("quickstart", err, stderr)
}

// parseArgs reads the command line and checks it (config.check) before
// anything is opened or allocated.
func parseArgs(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	backend := examplecli.BackendFlag(fs)
	fs.IntVar(&cfg.iters, "iters", 300, fmt.Sprintf("timed runs per mode (1 to %d)", maxIters))
	fs.IntVar(&cfg.batch, "batch", 64, "batch size (rows of the input)")
	fs.IntVar(&cfg.in, "in", 1024, "input features")
	fs.IntVar(&cfg.hidden, "hidden", 16, "hidden units")
	fs.IntVar(&cfg.out, "out", 1024, "output features")
	fs.Uint64Var(&cfg.seed, "seed", 0, "random seed (0: from the clock)")
	fs.StringVar(&cfg.deviceProfile, "deviceprofile", "", "write the fallback's device-time profile to this file (go tool pprof -top FILE)")
	if err := examplecli.Parse(fs, args); err != nil {
		return cfg, err
	}
	cfg.backend = *backend
	return cfg, cfg.check()
}
