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
	"fmt"
	"os"
	"time"
)

func main() {
	var cfg config
	def := os.Getenv("CANN_BACKEND")
	if def == "" {
		def = "fallback"
	}
	flag.StringVar(&cfg.backend, "backend", def, "backend: fallback, native or auto (default from CANN_BACKEND)")
	flag.StringVar(&cfg.model, "model", "", "offline model (.om for a CANN runtime) to load and run once in the smoke test")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "time allowed for the smoke test")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "doctor:", err)
		os.Exit(1)
	}
}
