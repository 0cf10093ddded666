// Package engramjob runs an Engram job with every rank in its own process
// on the fallback (each rank a fallback NPU with shareable memory and an
// HCCL fallback communicator joined by root info), as a program with one
// process per NPU does. The engram tests, benchmarks and examples/engram
// share it: the launcher re-executes the current binary, whose main (or
// TestMain) hands control to ServeRank when the rank environment is set.
//
// Every rank writes its slice of a table whose bytes are a function of
// (global row, byte), fetches random indices, checks every byte against
// that function and reports its throughput.
package engramjob

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/internal/rootpipe"
)

// Environment of a rank process.
const (
	envRank = "ENGRAMJOB_RANK"
	envJob  = "ENGRAMJOB_JOB"
)

// Job is what every rank runs.
type Job struct {
	Ranks    int
	Entries  int64 // rows per rank
	Hidden   int
	DType    engram.DType
	SFPacks  int           // scale-factor packs per row (fp8 storage; 0: none)
	SFType   engram.SFType // their type (engram.SFFP32 or engram.SFE8M0)
	Policy   engram.IndexPolicy
	T        int     // indices per fetch per rank
	Zipf     float64 // 0: uniform; else the Zipf exponent (> 0)
	Bad      float64 // share of out-of-range indices, in [0, 1]
	Iters    int     // timed fetches (after one checked warm-up)
	ZeroCopy bool    // register the slice in place (always so with Train)
	Train    bool    // training fetch + synthetic gradient + FetchGrad, both checked
	Cache    int     // hot-row cache rows per rank (inference fetches; 0: none)
	Seed     uint64
	Timeout  time.Duration
}

// Config is the engram config every rank of the job uses. A training
// job's storage is zero copy (the seed's with_grad takes nothing else),
// an inference job's copy window holds its slice.
func (j Job) Config() engram.Config {
	cfg := engram.Config{EntriesPerRank: j.Entries, Hidden: j.Hidden, DType: j.DType, SFPacks: j.SFPacks, SFType: j.SFType, Policy: j.Policy}
	if j.Train {
		cfg.MaxTokensPerRank = max(j.T, 1)
		return cfg
	}
	cfg.CacheRows = j.Cache
	if !j.ZeroCopy {
		cfg.Capacity = alignUp(satMul(j.Entries, cfg.RowBytes()), engram.CapacityAlign)
	}
	return cfg
}

// ZeroCopyStorage reports whether the ranks register their slices in
// place.
func (j Job) ZeroCopyStorage() bool { return j.ZeroCopy || j.Train }

// Report is one rank's result.
type Report struct {
	Rank    int
	OK      bool
	Err     string  `json:",omitempty"`
	Rows    int64   // rows fetched in the timed fetches
	Remote  int64   // of which on other ranks
	Bytes   int64   // bytes fetched in the timed fetches
	Seconds float64 // time of the timed fetches
	Allocs  float64 // heap allocations per timed fetch
	HitRate float64 // hot-row cache hit rate (with Job.Cache)
	Bad     int64   // out-of-range indices of a fetch (checked per the policy)
}

// GBps is the rank's fetch throughput in GB/s.
func (r Report) GBps() float64 { return float64(r.Bytes) / r.Seconds / 1e9 }

// Mrows is the rank's fetch rate in millions of rows per second.
func (r Report) Mrows() float64 { return float64(r.Rows) / r.Seconds / 1e6 }

// IsRank reports whether this process is a rank of a job.
func IsRank() bool { return os.Getenv(envRank) != "" }

// Launch checks the job (Check), starts job.Ranks copies of the current
// executable (with args) as the ranks, waits for them and returns their
// reports in rank order. A rank that fails, reports a wrong byte or
// prints no report is an error.
// The ranks' standard error goes to errOut.
func Launch(job Job, args []string, errOut io.Writer) ([]Report, error) {
	if err := job.Check(); err != nil {
		return nil, err
	}
	// The launcher only hosts the rendezvous.
	npu, err := fallback.New(fallback.WithDevices(1), fallback.WithDeviceMemory(1<<20), fallback.WithHostMemory(1<<20))
	if err != nil {
		return nil, err
	}
	defer npu.Close()
	sim := hcclsim.New(npu, hcclsim.Options{ConnectTimeout: job.Timeout, ExecTimeout: job.Timeout})
	defer sim.Close()
	root, err := sim.GetRootInfo()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	enc, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	outs := make([]bytes.Buffer, job.Ranks)
	errs := make([]error, job.Ranks)
	var mu sync.Mutex
	lw := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return errOut.Write(p) })
	var wg sync.WaitGroup
	for r := 0; r < job.Ranks; r++ {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), envRank+"="+strconv.Itoa(r), envJob+"="+string(enc))
		cmd.Stdout, cmd.Stderr = &outs[r], lw
		if err := rootpipe.Start(cmd, &root); err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = cmd.Wait()
		}()
	}
	wg.Wait()
	reps := make([]Report, job.Ranks)
	var all []error
	for r := range reps {
		reps[r] = Report{Rank: r}
		found := false
		sc := bufio.NewScanner(&outs[r])
		for sc.Scan() {
			if line := sc.Bytes(); bytes.HasPrefix(line, []byte("ENGRAMJOB ")) {
				found = json.Unmarshal(line[len("ENGRAMJOB "):], &reps[r]) == nil
			}
		}
		switch {
		case errs[r] != nil:
			all = append(all, fmt.Errorf("rank %d: process failed: %v %s", r, errs[r], reps[r].Err))
		case !found:
			all = append(all, fmt.Errorf("rank %d: no report", r))
		case !reps[r].OK:
			all = append(all, fmt.Errorf("rank %d: %s", r, reps[r].Err))
		}
	}
	return reps, errors.Join(all...)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// FillRow writes global row g of the job's table into dst: bytes that
// are a function of (seed, g, position), so every rank can check any
// fetched row without the others' data.
func FillRow(seed uint64, g int64, dst []byte) {
	x := uint64(g)*0x9e3779b97f4a7c15 ^ seed
	for j := 0; j < len(dst); j += 8 {
		x += 0x9e3779b97f4a7c15 // splitmix64
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		for k := 0; k < 8 && j+k < len(dst); k++ {
			dst[j+k] = byte(z >> (8 * k))
		}
	}
}
