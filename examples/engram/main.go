// Command engram runs an Engram job on the host-memory NPU with one
// process per rank: every rank writes its slice of a table of rows (bytes
// a function of row and column), fetches Zipf-distributed indices from
// the whole table with one-sided reads, checks every byte against the
// gather and prints its throughput.
//
//	go run ./examples/engram -ranks 4
//	go run ./examples/engram -ranks 2 -hidden 1280 -t 8192 -zipf 0 -zerocopy
//	go run ./examples/engram -ranks 3 -train
//	go run ./examples/engram -ranks 8 -train -hidden 1280
//	go run ./examples/engram -ranks 4 -cache 13107
//	go run ./examples/engram -ranks 4 -dtype fp8_e4m3 -sf e8m0 -policy zero-fill -bad 0.01
//
// Every mode of package engram runs from here: bf16, fp16, fp32 and fp8
// (e4m3, e5m2) rows, fp8 with scale factors (fp32 or e8m0, -sfpacks per
// row), both index policies with a share of out-of-range indices (-bad:
// zero-filled rows are checked to be zeros; under -policy error every
// fetch must fail naming the first bad index and its position), copy or
// zero-copy storage, the hot-row cache, and the training fetch (-train:
// every rank runs FetchTrain, a synthetic gradient and FetchGrad, and
// checks the fetched rows and the summed gradient of its own rows
// exactly; fp8 tables have no gradient path, so FetchTrain only). -zipf s
// draws indices from the Zipf law of exponent s > 0; the launcher prints
// how rank 0's indices spread over the rows against the law.
//
// Every flag is checked before anything is allocated or started,
// including the memory a rank needs against the device memory the
// backend reports. The launcher hosts the rendezvous and re-executes this
// program as the ranks; it exits with status 1 when any rank failed or
// read a wrong byte, 2 on a bad flag.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/internal/engramjob"
)

func main() {
	if engramjob.IsRank() {
		os.Exit(engramjob.ServeRank(os.Stdout))
	}
	job, err := parse(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "engram:", err)
		os.Exit(2)
	}
	if err := run(job, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "engram:", err)
		os.Exit(1)
	}
}

// parse reads the flags into a job and checks it (engramjob.Job.Check)
// before anything runs.
func parse(args []string, errOut io.Writer) (engramjob.Job, error) {
	fs := flag.NewFlagSet("engram", flag.ContinueOnError)
	fs.SetOutput(errOut)
	job := engramjob.Job{Seed: uint64(time.Now().UnixNano())}
	var dtype, sf, policy string
	fs.IntVar(&job.Ranks, "ranks", 4, fmt.Sprintf("rank processes to start (%d to %d)", engram.MinRanks, engram.MaxRanks))
	fs.Int64Var(&job.Entries, "entries", 1<<16, "table rows per rank")
	fs.IntVar(&job.Hidden, "hidden", 64, "elements per row")
	fs.StringVar(&dtype, "dtype", "bf16", "row dtype: bf16, fp16, fp32, fp8_e4m3 or fp8_e5m2")
	fs.StringVar(&sf, "sf", "fp32", "scale-factor dtype of fp8 rows: fp32 or e8m0")
	fs.IntVar(&job.SFPacks, "sfpacks", 0, "scale-factor packs per fp8 row (0: ceil(hidden/32))")
	fs.StringVar(&policy, "policy", "error", "out-of-range indices: error (the fetch fails) or zero-fill (zero rows)")
	fs.Float64Var(&job.Bad, "bad", 0, "share of out-of-range indices, in [0, 1]")
	fs.IntVar(&job.T, "t", 16384, "indices per fetch per rank")
	fs.Float64Var(&job.Zipf, "zipf", 1.05, "Zipf exponent s > 0 of the indices (0: uniform)")
	fs.IntVar(&job.Iters, "iters", 20, "timed fetches per rank")
	fs.IntVar(&job.Cache, "cache", 0, "hot-row cache of C remote rows per rank (inference only; 0: none)")
	fs.BoolVar(&job.Train, "train", false, "training fetch + synthetic gradient + FetchGrad, both checked (zero-copy storage)")
	fs.BoolVar(&job.ZeroCopy, "zerocopy", false, "register each rank's slice in place instead of copying it")
	fs.DurationVar(&job.Timeout, "timeout", time.Minute, "HCCL connect and execution timeout")
	if err := fs.Parse(args); err != nil {
		return job, err
	}
	if fs.NArg() > 0 {
		return job, fmt.Errorf("unexpected argument %q: every option is a flag (-h lists them)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch dtype {
	case "bf16":
		job.DType = engram.BF16
	case "fp16":
		job.DType = engram.FP16
	case "fp32":
		job.DType = engram.FP32
	case "fp8_e4m3", "e4m3", "fp8_e4m3fn":
		job.DType = engram.FP8E4M3
	case "fp8_e5m2", "e5m2":
		job.DType = engram.FP8E5M2
	default:
		return job, fmt.Errorf("-dtype %q: want bf16, fp16, fp32, fp8_e4m3 or fp8_e5m2", dtype)
	}
	if job.DType.FP8() {
		switch sf {
		case "fp32":
			job.SFType = engram.SFFP32
		case "e8m0":
			job.SFType = engram.SFE8M0
		default:
			return job, fmt.Errorf("-sf %q: want fp32 or e8m0", sf)
		}
		if !set["sfpacks"] {
			job.SFPacks = (job.Hidden + 31) / 32
		}
		if job.SFPacks <= 0 {
			return job, fmt.Errorf("-sfpacks %d: fp8 rows carry at least one scale-factor pack", job.SFPacks)
		}
	} else if set["sf"] || set["sfpacks"] {
		return job, fmt.Errorf("-sf and -sfpacks are for fp8 rows; -dtype %s has no scale factors", dtype)
	}
	switch policy {
	case "error":
		job.Policy = engram.IndexError
	case "zero-fill", "zerofill":
		job.Policy = engram.IndexZeroFill
	default:
		return job, fmt.Errorf("-policy %q: want error or zero-fill", policy)
	}
	if set["zerocopy"] && !job.ZeroCopy && job.Train {
		return job, errors.New("-train registers the table in place: -zerocopy=false is not accepted (the seed's with_grad takes zero_copy=True only)")
	}
	return job, job.Check()
}

func run(job engramjob.Job, out, errOut io.Writer) error {
	dist := "uniform"
	if job.Zipf > 0 {
		dist = fmt.Sprintf("Zipf(%g)", job.Zipf)
	}
	mode := "fetch"
	if job.Train {
		mode = "training fetch + FetchGrad"
		if job.DType.FP8() {
			mode = "training fetch (fp8: no gradient path)"
		}
	}
	storage := "copied"
	if job.ZeroCopyStorage() {
		storage = "zero copy"
	}
	sf := ""
	if job.SFPacks > 0 {
		sf = fmt.Sprintf(" + %d %v scale factors", job.SFPacks, job.SFType)
	}
	fmt.Fprintf(out, "engram: %s: %d rank processes, %d rows × %d %v%s per rank (%s), %d %s indices per fetch, %d fetches\n",
		mode, job.Ranks, job.Entries, job.Hidden, job.DType, sf, storage, job.T, dist, job.Iters)
	if job.Bad > 0 {
		fmt.Fprintf(out, "engram: %.3g%% of the indices out of range, policy %v\n", 100*job.Bad, job.Policy)
	}
	hits(job, out)
	reps, err := engramjob.Launch(job, nil, errOut)
	var gbs, mrows float64
	for _, r := range reps {
		if !r.OK {
			continue
		}
		gbs += r.GBps()
		mrows += r.Mrows()
		extra := ""
		if job.Cache > 0 {
			extra = fmt.Sprintf("  %5.1f%% cache hits", 100*r.HitRate)
		}
		if r.Bad > 0 {
			if job.Policy == engram.IndexZeroFill {
				extra += fmt.Sprintf("  %d rows zero-filled", r.Bad)
			} else {
				extra += fmt.Sprintf("  %d bad indices refused", r.Bad)
			}
		}
		fmt.Fprintf(out, "rank %d: %7.2f GB/s %8.2f Mrows/s  %5.1f%% remote rows%s  %5.1f allocs/fetch  every byte OK\n",
			r.Rank, r.GBps(), r.Mrows(), 100*float64(r.Remote)/float64(max(r.Rows, 1)), extra, r.Allocs)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "engram: all ranks OK: %.2f GB/s, %.2f Mrows/s in total\n", gbs, mrows)
	return nil
}

// hits prints how rank 0's indices spread over the table's rows: the
// share of the indices that fall on the 1, 10, 100 and 1000 most fetched
// rows, beside the share the law (Zipf or uniform) gives them.
func hits(job engramjob.Job, out io.Writer) {
	global := int64(job.Ranks) * job.Entries
	if job.T == 0 || global == 0 {
		return
	}
	count := map[int32]int{}
	n := 0
	for _, g := range engramjob.Indices(job, 0) {
		if engramjob.InRange(g, global) {
			count[g]++
			n++
		}
	}
	freq := make([]int, 0, len(count))
	for _, c := range count {
		freq = append(freq, c)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(freq)))
	fmt.Fprintf(out, "engram: rank 0's %d indices over %d rows (%d distinct); share of the most fetched rows, drawn vs law:\n", n, global, len(freq))
	sum, top := 0, 0
	for _, k := range []int64{1, 10, 100, 1000} {
		if k > global {
			break
		}
		for ; int64(top) < k && top < len(freq); top++ {
			sum += freq[top]
		}
		law := float64(k) / float64(global)
		if job.Zipf > 0 {
			law = engramjob.ZipfShare(job.Zipf, k, global)
		}
		fmt.Fprintf(out, "  top %4d: %6.2f%%  (law %6.2f%%)\n", k, 100*float64(sum)/float64(max(n, 1)), 100*law)
	}
}
