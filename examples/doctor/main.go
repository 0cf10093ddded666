// Command doctor is what to run first on a new Ascend machine, and what to
// paste into a bug report: which AscendCL and HCCL libraries the SDK loaded,
// the runtime version (aclrtGetVersion) and SoC name (aclrtGetSocName), which
// of the symbols the bindings use are present, the device count, and a short
// smoke test of device memory, streams and a model.
//
//	go run ./examples/doctor                    # backend from CANN_BACKEND, the fallback when unset
//	go run ./examples/doctor -backend native    # the installed libascendcl
//	go run ./examples/doctor -backend native -model resnet50.om
//
// It exits with status 1 when the library lacks a required symbol (naming
// it) or a smoke test fails. docs/compatibility.md says what each missing
// optional symbol disables.
package main

import (
	"context"
	"flag"
	"io"
	"os"
	"time"

	"github.com/ascend-go/cann/internal/examplecli"
)

func main() { os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr)) }

// mainCode is main with its arguments, output and exit status explicit.
func mainCode(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
		defer cancel()
		err = run(ctx, cfg, stdout)
	}
	return examplecli.Exit("doctor", err, stderr)
}

// parseArgs reads the command line and checks it before anything loads:
// the backend (-backend, else CANN_BACKEND, else the fallback), a
// positive -timeout, a readable -model, no stray arguments.
func parseArgs(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	backend := examplecli.BackendFlag(fs)
	fs.StringVar(&cfg.model, "model", "", "offline model (.om for a CANN runtime) to load and run once in the smoke test")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "time allowed for the smoke test")
	if err := examplecli.Parse(fs, args); err != nil {
		return cfg, err
	}
	cfg.backend = *backend
	if _, err := examplecli.ResolveBackend(cfg.backend); err != nil {
		return cfg, &examplecli.UsageError{Msg: err.Error()}
	}
	if cfg.timeout <= 0 {
		return cfg, examplecli.Usagef("-timeout %v: must be positive", cfg.timeout)
	}
	if cfg.model != "" {
		if err := examplecli.CheckReadableFile("model", cfg.model); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}
