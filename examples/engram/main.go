// Command engram runs an Engram job on the host-memory NPU with one
// process per rank: every rank writes its slice of a table of rows (bytes
// a function of row and column), fetches Zipf-distributed indices from
// the whole table with one-sided reads, checks every byte and prints its
// throughput.
//
//	go run ./examples/engram -ranks 4
//	go run ./examples/engram -ranks 2 -hidden 1280 -t 8192 -zipf 0 -zerocopy
//	go run ./examples/engram -ranks 3 -train
//	go run ./examples/engram -ranks 4 -cache 13107
//
// With -train every rank runs the training fetch, a synthetic gradient
// and FetchGrad, and checks the fetched rows and the summed gradient of
// its own rows exactly.
//
// The launcher hosts the rendezvous and re-executes this program as the
// ranks; it exits with status 1 when any rank failed or read a wrong byte.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/internal/engramjob"
)

func main() {
	if engramjob.IsRank() {
		os.Exit(engramjob.ServeRank(os.Stdout))
	}
	job := engramjob.Job{Seed: uint64(time.Now().UnixNano())}
	var dtype string
	flag.IntVar(&job.Ranks, "ranks", 4, "rank processes to start (≥ 2)")
	flag.Int64Var(&job.Entries, "entries", 1<<16, "table rows per rank")
	flag.IntVar(&job.Hidden, "hidden", 64, "elements per row")
	flag.StringVar(&dtype, "dtype", "bf16", "row dtype: bf16, fp16, fp32")
	flag.IntVar(&job.T, "t", 16384, "indices per fetch per rank")
	flag.Float64Var(&job.Zipf, "zipf", 1.05, "Zipf exponent of the indices (0: uniform)")
	flag.IntVar(&job.Iters, "iters", 20, "timed fetches per rank")
	flag.IntVar(&job.Cache, "cache", 0, "hot-row cache of C remote rows per rank (inference; 0: none)")
	flag.BoolVar(&job.Train, "train", false, "training fetch + synthetic gradient + FetchGrad, both checked")
	flag.BoolVar(&job.ZeroCopy, "zerocopy", false, "register each rank's slice in place instead of copying it")
	flag.DurationVar(&job.Timeout, "timeout", time.Minute, "HCCL connect and execution timeout")
	flag.Parse()
	switch dtype {
	case "bf16":
		job.DType = engram.BF16
	case "fp16":
		job.DType = engram.FP16
	case "fp32":
		job.DType = engram.FP32
	default:
		fmt.Fprintf(os.Stderr, "engram: -dtype %q: want bf16, fp16 or fp32\n", dtype)
		os.Exit(2)
	}
	if err := run(job, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "engram:", err)
		os.Exit(1)
	}
}

func run(job engramjob.Job, out, errOut io.Writer) error {
	dist := "uniform"
	if job.Zipf > 0 {
		dist = fmt.Sprintf("Zipf(%.2f)", job.Zipf)
	}
	mode := "fetch"
	if job.Train {
		mode = "training fetch + FetchGrad"
	}
	fmt.Fprintf(out, "engram: %s: %d rank processes, %d rows × %d %v per rank, %d %s indices per fetch, %d fetches\n",
		mode, job.Ranks, job.Entries, job.Hidden, job.DType, job.T, dist, job.Iters)
	reps, err := engramjob.Launch(job, nil, errOut)
	var gbs, mrows float64
	for _, r := range reps {
		if !r.OK {
			continue
		}
		gbs += r.GBps()
		mrows += r.Mrows()
		cache := ""
		if job.Cache > 0 {
			cache = fmt.Sprintf("  %5.1f%% cache hits", 100*r.HitRate)
		}
		fmt.Fprintf(out, "rank %d: %7.2f GB/s %8.2f Mrows/s  %5.1f%% remote rows%s  %5.1f allocs/fetch  every byte OK\n",
			r.Rank, r.GBps(), r.Mrows(), 100*float64(r.Remote)/float64(max(r.Rows, 1)), cache, r.Allocs)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "engram: all ranks OK: %.2f GB/s, %.2f Mrows/s in total\n", gbs, mrows)
	return nil
}
