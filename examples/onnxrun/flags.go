package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ascend-go/cann/internal/examplecli"
)

// maxRuns bounds -runs: the latencies are kept to sort them, and a
// million runs is more than a percentile needs.
const maxRuns = 1_000_000

// parseArgs reads and checks the command line: every mistake that can be
// seen without the model is refused here, before any work.
func parseArgs(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("onnxrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.model, "model", "", "ONNX model file (required)")
	fs.Var(&cfg.inputs, "input", "NAME=FILE.npy: feed this input from a NumPy file (repeatable)")
	fs.Var(&cfg.shapes, "shape", "NAME=D,D,...: fix the dims of an input with symbolic dims (repeatable)")
	fs.StringVar(&cfg.out, "out", "", "directory to write each output as NAME.npy")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the random inputs")
	fs.IntVar(&cfg.runs, "runs", 50, fmt.Sprintf("timed runs for the latency percentiles (0 to %d)", maxRuns))
	fs.StringVar(&cfg.deviceProfile, "deviceprofile", "", "write the fallback's device-time profile of the timed runs to this file (go tool pprof -top FILE)")
	fs.StringVar(&cfg.batch, "batch", "", "B,B,...: import with these batch gears (ATC's --dynamic_batch_size; the inputs' dim 0 must be symbolic) and run each gear")
	backend := examplecli.BackendFlag(fs)
	if err := examplecli.Parse(fs, args); err != nil {
		return cfg, err
	}
	cfg.backend = *backend
	return cfg, cfg.check()
}

// check refuses what the flags get wrong, naming the flag: a missing or
// unreadable model, a negative or huge run count, malformed -shape,
// -input and -batch values, -input with -batch, outputs that cannot be
// written and a backend onnxrun cannot use. The sizes are checked later,
// against the device (run).
func (c *config) check() error {
	b, err := examplecli.ResolveBackend(c.backend)
	if err != nil {
		return &examplecli.UsageError{Msg: err.Error()}
	}
	if _, err := b.FallbackOnly("onnxrun", "it imports ONNX with ge/onnx and runs the ge model, which only the fallback executes; "+
		"on the device build an .om with ATC and run it with examples/doctor -backend native -model FILE.om"); err != nil {
		return &examplecli.UsageError{Msg: err.Error()}
	}
	if c.model == "" {
		return examplecli.Usagef("-model FILE.onnx is required: the ONNX model to run (see -h)")
	}
	if err := examplecli.CheckReadableFile("model", c.model); err != nil {
		return err
	}
	if err := examplecli.CheckRange("runs", int64(c.runs), 0, maxRuns); err != nil {
		return err
	}
	if _, err := parseShapes(c.shapes); err != nil {
		return err
	}
	for _, s := range c.inputs {
		name, file, ok := strings.Cut(s, "=")
		if !ok || name == "" || file == "" {
			return examplecli.Usagef("-input %q: want NAME=FILE.npy", s)
		}
		if err := examplecli.CheckReadableFile("input "+name, file); err != nil {
			return err
		}
	}
	if c.batch != "" {
		if _, err := parseGears(c.batch); err != nil {
			return err
		}
		if len(c.inputs) > 0 {
			return examplecli.Usagef("-input is not supported with -batch: each gear gets seeded random rows")
		}
	}
	if err := examplecli.CheckWritableDir("out", c.out); err != nil {
		return err
	}
	return examplecli.CheckWritableFile("deviceprofile", c.deviceProfile)
}

// parseShapes reads the -shape values: NAME=D,D,... with dims ≥ 0.
func parseShapes(vals []string) (map[string][]int64, error) {
	shapes := map[string][]int64{}
	for _, s := range vals {
		name, dims, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return nil, examplecli.Usagef("-shape %q: want NAME=D,D (comma-separated dims)", s)
		}
		var ds []int64
		for _, f := range strings.Split(dims, ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return nil, examplecli.Usagef("-shape %q: dim %q is not a whole number", s, f)
			}
			if v < 0 {
				return nil, examplecli.Usagef("-shape %q: dim %d is negative", s, v)
			}
			ds = append(ds, v)
		}
		if _, dup := shapes[name]; dup {
			return nil, examplecli.Usagef("-shape %s given twice", name)
		}
		shapes[name] = ds
	}
	return shapes, nil
}

// parseGears reads -batch "1,2,4,8": batch sizes ≥ 1, no repeats.
func parseGears(s string) ([]int, error) {
	var gears []int
	seen := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, examplecli.Usagef("-batch %q: want comma-separated batch sizes ≥ 1", s)
		}
		if seen[v] {
			return nil, examplecli.Usagef("-batch %q: gear %d given twice", s, v)
		}
		seen[v] = true
		gears = append(gears, v)
	}
	return gears, nil
}
