package engramjob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/rootpipe"
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
	root, err := rootpipe.Read()
	if err != nil {
		return err
	}
	if job.Timeout <= 0 {
		job.Timeout = time.Minute
	}
	return runRank(rank, &root, job, rep)
}

func runRank(rank int, root *hccl.RootInfo, job Job, rep *Report) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := job.Config().Check(job.Ranks); err != nil {
		return err
	}
	cfg := job.Config()
	rb, sfb := cfg.RowBytes(), cfg.SFRowBytes()
	slice := job.Entries * rb
	out := int64(job.T) * rb
	npu, err := fallback.New(fallback.WithDevices(1), fallback.WithDeviceMemory(uintptr(job.DeviceBytes(rank))),
		fallback.WithHostMemory(uintptr(job.HostBytes())), fallback.WithShareableDeviceMemory())
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

	// This rank's slice, global rows [rank·E, (rank+1)·E), allocated
	// before the buffer: zero-copy storage must outlive it.
	var rows []byte
	if job.ZeroCopyStorage() && slice > 0 {
		hb, err := dev.MallocHost(uintptr(slice))
		if err != nil {
			return err
		}
		defer hb.Close()
		rows = hb.Bytes()[:slice]
	} else {
		rows = make([]byte, slice)
	}
	for k := int64(0); k < job.Entries; k++ {
		FillRow(job.Seed, int64(rank)*job.Entries+k, rows[k*rb:(k+1)*rb])
	}
	// The scale-factor table, replicated: row g's are a function of g.
	var sf *acl.DeviceBuffer
	if sfb > 0 {
		global := int64(job.Ranks) * job.Entries
		tab := make([]byte, global*sfb)
		for g := int64(0); g < global; g++ {
			FillRow(sfSeed(job.Seed), g, tab[g*sfb:(g+1)*sfb])
		}
		if sf, err = dev.Malloc(uintptr(max(len(tab), 1)), acl.MemMallocHugeFirst); err != nil {
			return err
		}
		defer sf.Close()
		if len(tab) > 0 {
			if err := sf.CopyFromHost(tab); err != nil {
				return err
			}
		}
	}
	buf, err := engram.New(comm, dev, cfg)
	if err != nil {
		return err
	}
	defer buf.Destroy()
	ctx, cancel := context.WithTimeout(context.Background(), job.Timeout)
	defer cancel()
	if err := buf.Write(ctx, engram.Storage{Rows: rows, ZeroCopy: job.ZeroCopyStorage(), SF: sf}); err != nil {
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
		if sfb > 0 {
			if o.SF, err = dev.Malloc(uintptr(int64(job.T)*sfb), acl.MemMallocHugeFirst); err != nil {
				return err
			}
			defer o.SF.Close()
		}
	}
	var res engram.Result
	fetch := func() error {
		p, err := buf.FetchInto(idx, o, s)
		if err != nil {
			return err
		}
		res, err = p.Wait(ctx)
		return checkIndexErr(err, job, idx, -1)
	}
	verify := func() error {
		if job.Policy == engram.IndexError && firstBad(idx, job) >= 0 {
			return nil // the fetch failed as it must; no rows to check
		}
		if err := checkResult(res, o, idx, job); err != nil {
			return err
		}
		return nil
	}
	if err := fetch(); err != nil {
		return err
	}
	if err := verify(); err != nil {
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
		if err := verify(); err != nil {
			return err
		}
	}
	global := int64(job.Ranks) * job.Entries
	for _, g := range idx {
		if InRange(g, global) && int64(g)/max(job.Entries, 1) != int64(rank) {
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
	rep.Bad = countBad(idx, job)
	return nil
}

// sfSeed is the seed of the scale-factor table's bytes.
func sfSeed(seed uint64) uint64 { return seed ^ 0x5c4e_f4c7_0000_0001 }

// firstBad is the position of the first out-of-range index, −1 if none.
func firstBad(idx []int32, job Job) int {
	global := int64(job.Ranks) * job.Entries
	for i, g := range idx {
		if !InRange(g, global) {
			return i
		}
	}
	return -1
}

func countBad(idx []int32, job Job) int64 {
	global := int64(job.Ranks) * job.Entries
	n := int64(0)
	for _, g := range idx {
		if !InRange(g, global) {
			n++
		}
	}
	return n
}

// checkIndexErr compares a fetch's error with what the index policy
// prescribes for idx: under IndexError with an out-of-range index, an
// ErrIndex naming the first one and its position (and, for a training
// fetch, badRank ≥ 0: the first rank with one), else no error.
func checkIndexErr(err error, job Job, idx []int32, badRank int) error {
	pos := firstBad(idx, job)
	if badRank >= 0 {
		pos = firstBad(Indices(job, badRank), job)
		idx = Indices(job, badRank)
	}
	if job.Policy != engram.IndexError || pos < 0 {
		return err
	}
	if err == nil {
		return fmt.Errorf("index %d at position %d is out of range, and the fetch did not fail", idx[pos], pos)
	}
	want := fmt.Sprintf("index %d at position %d is outside", idx[pos], pos)
	if !errors.Is(err, engram.ErrIndex) || !strings.Contains(err.Error(), want) {
		return fmt.Errorf("the fetch failed with %q, want an ErrIndex naming %q", err, want)
	}
	return nil
}

// checkResult compares every fetched byte, rows and scale factors, with
// the table's functions: zeros for an out-of-range index (IndexZeroFill),
// whose count Result.Zeroed must be.
func checkResult(res engram.Result, o engram.Output, idx []int32, job Job) error {
	cfg := job.Config()
	if want := countBad(idx, job); int64(res.Zeroed) != want {
		return fmt.Errorf("%d rows zero-filled, want %d", res.Zeroed, want)
	}
	if err := check(o.Rows, idx, cfg.RowBytes(), job.Seed, job); err != nil {
		return err
	}
	if sfb := cfg.SFRowBytes(); sfb > 0 {
		if err := check(o.SF, idx, sfb, sfSeed(job.Seed), job); err != nil {
			return fmt.Errorf("scale factors: %w", err)
		}
	}
	return nil
}

// check compares every fetched byte with the table's function (zeros for
// an out-of-range index).
func check(rows *acl.DeviceBuffer, idx []int32, rb int64, seed uint64, job Job) error {
	if len(idx) == 0 {
		return nil
	}
	global := int64(job.Ranks) * job.Entries
	got := make([]byte, int64(len(idx))*rb)
	if err := rows.CopyToHostAt(got, 0); err != nil {
		return err
	}
	want := make([]byte, rb)
	for i, g := range idx {
		clear(want)
		if InRange(g, global) {
			FillRow(seed, int64(g), want)
		}
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
