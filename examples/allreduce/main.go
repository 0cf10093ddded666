// Command allreduce runs a multi-process HCCL job on the host-memory NPU:
// one command starts N rank processes (by re-executing itself), every rank
// joins one communicator through a root info, runs an fp32 AllReduce and
// one-sided BatchGet reads of its neighbour's table, checks the results
// and prints the bandwidth it measured.
//
//	go run ./examples/allreduce -ranks 4
//	go run ./examples/allreduce -ranks 3 -size 16MiB -iters 20 -rows 100000
//
// The launcher hosts the rendezvous (the root info carries its loopback
// address); each rank process has its own fallback NPU, and the HCCL data
// between ranks moves through shared memory. Every rank prints its own
// report; the launcher prints them in rank order and exits with status 1
// when any rank failed or found a wrong result.
//
// -backend (or CANN_BACKEND) is auto, native or fallback like every
// example's; the ranks are processes of the HCCL fallback, so auto is
// the fallback and native is refused. Every flag is checked before a rank
// starts: the counts against their ranges, a rank's memory against the
// device memory a fallback device reports, all ranks' against the host's.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/ascend-go/cann/internal/examplecli"
)

// config is the job every rank runs.
type config struct {
	ranks   int
	size    int64 // AllReduce bytes
	iters   int
	rows    int // BatchGet: rows read per batch
	rowSize int // BatchGet: bytes per row
	timeout time.Duration
}

func main() {
	if rankEnv() {
		os.Exit(runRankFromEnv(os.Stdout))
	}
	os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
}

// mainCode is the launcher's main with its arguments, output and exit
// status explicit: the flags are checked (parseArgs) before any rank
// process starts.
func mainCode(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if err == nil {
		err = launch(cfg, stdout, stderr)
	}
	return examplecli.Exit("allreduce", err, stderr)
}

func parseArgs(args []string, stderr io.Writer) (config, error) {
	var cfg config
	var size string
	fs := flag.NewFlagSet("allreduce", flag.ContinueOnError)
	fs.SetOutput(stderr)
	backend := examplecli.BackendFlag(fs)
	fs.IntVar(&cfg.ranks, "ranks", 4, fmt.Sprintf("rank processes to start (1 to %d)", maxRanks))
	fs.StringVar(&size, "size", "64MiB", "AllReduce message size (B, KiB, MiB, GiB)")
	fs.IntVar(&cfg.iters, "iters", 10, fmt.Sprintf("timed AllReduce iterations (1 to %d)", maxIters))
	fs.IntVar(&cfg.rows, "rows", 50000, "rows read per BatchGet")
	fs.IntVar(&cfg.rowSize, "row", 128, "bytes per row (64–160 is an Engram row)")
	fs.DurationVar(&cfg.timeout, "timeout", 30*time.Second, "HCCL connect and execution timeout")
	if err := examplecli.Parse(fs, args); err != nil {
		return cfg, err
	}
	var err error
	if cfg.size, err = parseSize(size); err != nil {
		return cfg, &examplecli.UsageError{Msg: "-" + err.Error()}
	}
	return cfg, cfg.check(*backend)
}

// parseSize reads "64MiB", "512KiB" or a plain byte count.
func parseSize(s string) (int64, error) {
	var n int64
	var unit string
	if _, err := fmt.Sscanf(s, "%d%s", &n, &unit); err != nil {
		if _, err := fmt.Sscanf(s, "%d", &n); err != nil {
			return 0, fmt.Errorf("size %q: %v", s, err)
		}
	}
	shift := 0
	switch unit {
	case "", "B":
	case "KiB", "K":
		shift = 10
	case "MiB", "M":
		shift = 20
	case "GiB", "G":
		shift = 30
	default:
		return 0, fmt.Errorf("size %q: unit %q", s, unit)
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	n <<= shift
	if n < 4 || n%4 != 0 {
		return 0, fmt.Errorf("size %q: need a positive multiple of 4 bytes (fp32)", s)
	}
	return n, nil
}
