package engramjob

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// ServeRank runs this process's rank of the job its environment names,
// prints its report (one "ENGRAMJOB {json}" line) to out and returns the
// exit status: 0 when every byte it fetched was right.
func ServeRank(out io.Writer) int {
	rep := Report{Rank: -1}
	err := serve(&rep)
	if err != nil {
		rep.OK, rep.Err = false, err.Error()
	} else {
		rep.OK = true
	}
	line, _ := json.Marshal(rep)
	fmt.Fprintf(out, "ENGRAMJOB %s\n", line)
	if err != nil {
		return 1
	}
	return 0
}

func serve(rep *Report) (err error) {
	rank, err := strconv.Atoi(os.Getenv(envRank))
	if err != nil {
		return fmt.Errorf("bad %s: %v", envRank, err)
	}
	rep.Rank = rank
	var job Job
	if err := json.Unmarshal([]byte(os.Getenv(envJob)), &job); err != nil {
		return fmt.Errorf("bad %s: %v", envJob, err)
	}
	raw, err := hex.DecodeString(os.Getenv(envRoot))
	if err != nil || len(raw) != hccl.RootInfoBytes {
		return fmt.Errorf("bad %s", envRoot)
	}
	var root hccl.RootInfo
	copy(root[:], raw)
	if job.Timeout <= 0 {
		job.Timeout = time.Minute
	}
	return runRank(rank, &root, job, rep)
}

func runRank(rank int, root *hccl.RootInfo, job Job, rep *Report) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cfg := engram.Config{EntriesPerRank: job.Entries, Hidden: job.Hidden, DType: job.DType}
	if job.Train {
		cfg.MaxTokensPerRank = max(job.T, 1)
	} else {
		cfg.CacheRows = job.Cache
	}
	rb := cfg.RowBytes()
	slice := job.Entries * rb
	if !job.ZeroCopy {
		cfg.Capacity = (slice + engram.CapacityAlign - 1) / engram.CapacityAlign * engram.CapacityAlign
	}
	out := int64(job.T) * rb
	npu, err := fallback.New(fallback.WithDevices(1), fallback.WithDeviceMemory(uintptr(out+64<<20)),
		fallback.WithHostMemory(uintptr(2*slice+64<<20)), fallback.WithShareableDeviceMemory())
	if err != nil {
		return err
	}
	defer npu.Close()
	rt, err := acl.Init(npu, "")
	if err != nil {
		return err
	}
	defer rt.Close()
	dev, err := rt.OpenDevice(0)
	if err != nil {
		return err
	}
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	sim := hcclsim.New(npu, hcclsim.Options{ConnectTimeout: job.Timeout, ExecTimeout: job.Timeout})
	defer sim.Close()
	var comm *hccl.Comm
	if err := dev.Do(func() error {
		comm, err = hccl.InitRootInfo(sim, root, job.Ranks, rank, hccl.WithStream(s.Handle()), hccl.WithDevice(0))
		return err
	}); err != nil {
		return err
	}
	defer dev.Do(comm.Close)
	buf, err := engram.New(comm, dev, cfg)
	if err != nil {
		return err
	}
	defer buf.Destroy()
	ctx, cancel := context.WithTimeout(context.Background(), job.Timeout)
	defer cancel()

	// This rank's slice: global rows [rank·E, (rank+1)·E).
	var rows []byte
	if job.ZeroCopy && slice > 0 {
		hb, err := dev.MallocHost(uintptr(slice))
		if err != nil {
			return err
		}
		rows = hb.Bytes()[:slice]
	} else {
		rows = make([]byte, slice)
	}
	for k := int64(0); k < job.Entries; k++ {
		FillRow(job.Seed, int64(rank)*job.Entries+k, rows[k*rb:(k+1)*rb])
	}
	if err := buf.Write(ctx, engram.Storage{Rows: rows, ZeroCopy: job.ZeroCopy}); err != nil {
		return err
	}
	idx := Indices(job, rank)
	if job.Train {
		return trainRank(ctx, buf, dev, rank, job, idx, rep)
	}
	var o engram.Output
	if out > 0 {
		if o.Rows, err = dev.Malloc(uintptr(out), acl.MemMallocHugeFirst); err != nil {
			return err
		}
		defer o.Rows.Close()
	}
	fetch := func() error {
		p, err := buf.FetchInto(idx, o, s)
		if err != nil {
			return err
		}
		_, err = p.Wait(ctx)
		return err
	}
	if err := fetch(); err != nil {
		return err
	}
	if err := check(o.Rows, idx, rb, job.Seed); err != nil {
		return err
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t0 := time.Now()
	for range job.Iters {
		if err := fetch(); err != nil {
			return err
		}
	}
	rep.Seconds = time.Since(t0).Seconds()
	runtime.ReadMemStats(&m1)
	if job.Iters > 0 {
		rep.Allocs = float64(m1.Mallocs-m0.Mallocs) / float64(job.Iters)
		if err := check(o.Rows, idx, rb, job.Seed); err != nil {
			return err
		}
	}
	for _, g := range idx {
		if int64(g)/max(job.Entries, 1) != int64(rank) {
			rep.Remote += int64(job.Iters)
		}
	}
	if job.Cache > 0 {
		// Remote reads actually made: the cache's misses of all fetches
		// but the warm-up's share, which the first fetch makes uncached.
		st := buf.CacheStats()
		rep.HitRate = st.HitRate()
		rep.Remote = st.Misses * int64(job.Iters) / int64(job.Iters+1)
	}
	rep.Rows = int64(job.Iters) * int64(job.T)
	rep.Bytes = rep.Rows * rb
	return nil
}

// Indices are the indices rank r fetches: Zipf or uniform over the whole
// table, and (T ≥ 2) an own row twice. Every rank can compute any rank's.
func Indices(job Job, r int) []int32 {
	rng := rand.New(rand.NewPCG(job.Seed, uint64(r)))
	global := int64(job.Ranks) * job.Entries
	var idx []int32
	if job.Zipf > 0 {
		idx = Zipf(rng, job.T, global, job.Zipf)
	} else {
		idx = Uniform(rng, job.T, global)
	}
	if job.T >= 2 && job.Entries > 0 { // an own row, twice
		idx[0] = int32(int64(r)*job.Entries + rng.Int64N(job.Entries))
		idx[1] = idx[0]
	}
	return idx
}

// check compares every fetched byte with the table's function.
func check(rows *acl.DeviceBuffer, idx []int32, rb int64, seed uint64) error {
	if len(idx) == 0 {
		return nil
	}
	got := make([]byte, int64(len(idx))*rb)
	if err := rows.CopyToHostAt(got, 0); err != nil {
		return err
	}
	want := make([]byte, rb)
	for i, g := range idx {
		FillRow(seed, int64(g), want)
		row := got[int64(i)*rb : int64(i+1)*rb]
		if !bytes.Equal(row, want) {
			j := 0
			for row[j] == want[j] {
				j++
			}
			return fmt.Errorf("token %d (row %d) byte %d = %#x, want %#x", i, g, j, row[j], want[j])
		}
	}
	return nil
}

// Uniform draws n indices uniformly over [0, m).
func Uniform(rng *rand.Rand, n int, m int64) []int32 {
	out := make([]int32, n)
	for i := range out {
		if m > 0 {
			out[i] = int32(rng.Int64N(m))
		}
	}
	return out
}

// Zipf draws n indices over [0, m) with P(rank k) ∝ k^−s (s > 1, inverse
// CDF of the continuous bound, rejected outside), the hot ranks spread
// over the table by a multiplicative hash.
func Zipf(rng *rand.Rand, n int, m int64, s float64) []int32 {
	out := make([]int32, n)
	if m == 0 {
		return out
	}
	for i := range out {
		var k int64
		for {
			u := rng.Float64()
			x := math.Pow(1-u*(1-math.Pow(float64(m)+1, 1-s)), 1/(1-s))
			k = int64(x) - 1
			if k >= 0 && k < m {
				break
			}
		}
		out[i] = int32((k*2654435761 + 12345) % m)
	}
	return out
}
