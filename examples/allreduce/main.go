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
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
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
	var cfg config
	var size string
	flag.IntVar(&cfg.ranks, "ranks", 4, "rank processes to start")
	flag.StringVar(&size, "size", "64MiB", "AllReduce message size (B, KiB, MiB)")
	flag.IntVar(&cfg.iters, "iters", 10, "timed AllReduce iterations")
	flag.IntVar(&cfg.rows, "rows", 50000, "rows read per BatchGet")
	flag.IntVar(&cfg.rowSize, "row", 128, "bytes per row (64–160 is an Engram row)")
	flag.DurationVar(&cfg.timeout, "timeout", 30*time.Second, "HCCL connect and execution timeout")
	flag.Parse()
	var err error
	if cfg.size, err = parseSize(size); err != nil {
		fmt.Fprintln(os.Stderr, "allreduce:", err)
		os.Exit(2)
	}
	if err := launch(cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "allreduce:", err)
		os.Exit(1)
	}
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
	switch unit {
	case "", "B":
	case "KiB", "K":
		n <<= 10
	case "MiB", "M":
		n <<= 20
	case "GiB", "G":
		n <<= 30
	default:
		return 0, fmt.Errorf("size %q: unit %q", s, unit)
	}
	if n < 4 || n%4 != 0 {
		return 0, fmt.Errorf("size %q: need a positive multiple of 4 bytes (fp32)", s)
	}
	return n, nil
}
