// Command realhw validates the SDK on an Ascend machine in one command
// (ci/real-hardware calls it): it runs the ACL and HCCL conformance suites
// on the CANN installation in $CANN_REAL_LIB_DIR (TestConformanceReal of
// acl/native and hccl/native), the examples that run on the native
// libraries (examples/doctor), and the benchmarks, and writes a Markdown
// report: pass/skip/fail of every subtest, the examples' output, and a
// table per benchmark.
//
//	ci/real-hardware -o report.md -model resnet50.om   # CANN_REAL_LIB_DIR=/usr/local/Ascend/ascend-toolkit/latest/lib64
//	ci/real-hardware --dry-run -o report.md  # the same steps over the C stubs
//
// The dry run builds the C stub libraries (internal/stubbuild), puts them
// in a temporary lib64 and runs the same steps against it, with a few
// benchmarks at -benchtime 1x. The exit status is 1 when a step fails.
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
	flag.BoolVar(&cfg.dryRun, "dry-run", false, "run against the C stubs instead of CANN_REAL_LIB_DIR")
	flag.StringVar(&cfg.libDir, "lib-dir", os.Getenv("CANN_REAL_LIB_DIR"), "CANN lib64 directory (default $CANN_REAL_LIB_DIR)")
	flag.StringVar(&cfg.out, "o", "real-hardware-report.md", "Markdown report to write")
	flag.StringVar(&cfg.bench, "bench", "", "benchmark regexp (default: all; a few in a dry run)")
	flag.StringVar(&cfg.benchtime, "benchtime", "", "go test -benchtime (default 1s; 1x in a dry run)")
	flag.StringVar(&cfg.model, "model", "", "offline model (.om) the doctor loads and runs")
	flag.DurationVar(&cfg.timeout, "timeout", 2*time.Hour, "time allowed for everything")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "real-hardware: unexpected argument %q (flags only; see -h)\n", flag.Arg(0))
		os.Exit(2)
	}
	cfg.libDirFrom = "CANN_REAL_LIB_DIR"
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "lib-dir" {
			cfg.libDirFrom = "-lib-dir"
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	ok, err := run(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "real-hardware:", err)
		os.Exit(2)
	}
	if !ok {
		fmt.Fprintln(os.Stderr, "real-hardware: some steps failed; see", cfg.out)
		os.Exit(1)
	}
}
