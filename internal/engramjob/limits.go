package engramjob

import (
	"errors"
	"fmt"
	"math"

	"golang.org/x/sys/unix"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/fallback"
)

// Limits of a job that engram itself does not set.
const (
	// MaxT bounds the indices per fetch per rank: every rank draws every
	// rank's indices to check a training job's gradients.
	MaxT = 1 << 24
	// slack is device and host memory a rank gets beyond what the job's
	// buffers need (allocation rounding, the runtime's own blocks).
	slack = 64 << 20
)

// ErrJob is wrapped by every error of Check.
var ErrJob = errors.New("engramjob: invalid job")

func jobErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrJob}, args...)...)
}

// Check refuses a job that cannot run, before anything is allocated or
// started: counts out of range, options that do nothing (a cache with the
// training fetch, which never reads it), the engram config as New would
// refuse it, and memory: what one rank needs on its device must fit the
// device memory an NPU of the backend reports (aclrtGetMemInfo of a
// fallback device), and what all ranks need together must fit this
// machine's memory (the fallback's device and host memory are this
// machine's).
func (j Job) Check() error {
	switch {
	case j.Ranks < engram.MinRanks || j.Ranks > engram.MaxRanks:
		return jobErr("-ranks %d: want %d to %d rank processes", j.Ranks, engram.MinRanks, engram.MaxRanks)
	case j.Entries < 0:
		return jobErr("-entries %d: table rows per rank, want ≥ 0", j.Entries)
	case j.T < 0 || j.T > MaxT:
		return jobErr("-t %d: indices per fetch per rank, want 0 to %d", j.T, MaxT)
	case j.Iters < 0:
		return jobErr("-iters %d: timed fetches, want ≥ 0", j.Iters)
	case math.IsNaN(j.Zipf) || math.IsInf(j.Zipf, 0) || j.Zipf < 0:
		return jobErr("-zipf %v: want 0 (uniform) or a finite exponent s > 0", j.Zipf)
	case math.IsNaN(j.Bad) || j.Bad < 0 || j.Bad > 1:
		return jobErr("-bad %v: the share of out-of-range indices, want [0, 1]", j.Bad)
	case j.Cache < 0:
		return jobErr("-cache %d: cache rows per rank, want ≥ 0", j.Cache)
	case j.Cache > 0 && j.Train:
		return jobErr("-cache %d with -train: the cache serves inference fetches only", j.Cache)
	case j.Timeout <= 0:
		return jobErr("-timeout %v: want > 0", j.Timeout)
	}
	if err := j.Config().Check(j.Ranks); err != nil {
		return err
	}
	devMem, err := deviceMemory()
	if err != nil {
		return err
	}
	if need := j.deviceBound(); need > devMem {
		return jobErr("a rank needs at least %s of device memory, more than the %s a device of the backend reports", size(need), size(devMem))
	}
	var total int64
	worst := int64(0)
	recv := j.receivedAll()
	for r := 0; r < j.Ranks; r++ {
		d := j.deviceBytes(recv[r])
		worst = max(worst, d)
		total = satAdd(total, satAdd(d, j.HostBytes()))
	}
	if worst > devMem {
		return jobErr("a rank needs %s of device memory, more than the %s a device of the backend reports", size(worst), size(devMem))
	}
	if ram := machineMemory(); ram > 0 && total > ram {
		return jobErr("the %d ranks need %s of memory in all, more than this machine's %s", j.Ranks, size(total), size(ram))
	}
	return nil
}

// deviceMemory is the memory a device of the fallback backend reports
// (its default size).
func deviceMemory() (int64, error) {
	npu, err := fallback.New(fallback.WithDevices(1), fallback.WithHostMemory(fallback.Alignment))
	if err != nil {
		return 0, err
	}
	defer npu.Close()
	rt, err := acl.Init(npu, "")
	if err != nil {
		return 0, err
	}
	defer rt.Close()
	dev, err := rt.OpenDevice(0)
	if err != nil {
		return 0, err
	}
	_, total, err := dev.MemInfo(acl.HBMMem)
	return int64(total), err
}

// machineMemory is this machine's RAM, 0 when unknown.
func machineMemory() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int64(min(uint64(si.Totalram)*uint64(si.Unit), math.MaxInt64))
}

// deviceBound is a lower bound of DeviceBytes that needs no indices: the
// output rows (and, training, the gradient) alone.
func (j Job) deviceBound() int64 {
	rb := j.Config().RowBytes()
	n := satMul(int64(j.T), rb)
	if j.Train {
		n = satMul(n, 3)
	}
	return n
}

// DeviceBytes is the device memory rank r's fallback NPU is created with:
// what the job's buffers need at their peak, plus slack. Inference: the
// output rows and scale factors, the replicated sf table and the hot-row
// cache. Training: the fetched rows, the gradient, the training fetch's
// and FetchGrad's exchange buffers (every row the other ranks ask of this
// one, counted from their indices, sent and received), the context
// tensors and the sf table.
func (j Job) DeviceBytes(r int) int64 {
	if !j.Train {
		return j.deviceBytes(0)
	}
	return j.deviceBytes(j.receivedAll()[r])
}

// deviceBytes is DeviceBytes of a rank that owns recv of all ranks'
// indices.
func (j Job) deviceBytes(recv int64) int64 {
	cfg := j.Config()
	rb, sfb, t := cfg.RowBytes(), cfg.SFRowBytes(), int64(j.T)
	w := int64(j.Ranks)
	n := satAdd(satMul(t, rb), satMul(t, sfb))
	n = satAdd(n, satMul(satMul(w, j.Entries), sfb))
	if !j.Train {
		n = satAdd(n, satMul(int64(j.Cache), rb))
		return satAdd(n, slack)
	}
	// gradient, sorted gradient and received rows of FetchTrain: T rows
	// each; sent rows, received gradients and grad_unique: recv rows each.
	n = satAdd(n, satMul(3*t, rb))
	n = satAdd(n, satMul(3*recv, rb+4))
	// perm, indices, send/recv counts, recv_local_entry (T·W), exchanges.
	n = satAdd(n, satMul(4, satAdd(satMul(t, w+3), 64*w)))
	return satAdd(n, slack)
}

// receivedAll counts, for every rank, the in-range indices of all ranks
// that it owns (training jobs only: zeros otherwise).
func (j Job) receivedAll() []int64 {
	n := make([]int64, j.Ranks)
	if j.Entries == 0 || !j.Train {
		return n
	}
	global := int64(j.Ranks) * j.Entries
	for s := 0; s < j.Ranks; s++ {
		for _, g := range Indices(j, s) {
			if InRange(g, global) {
				n[int64(g)/j.Entries]++
			}
		}
	}
	return n
}

// HostBytes is the pinned host memory a rank's fallback NPU is created
// with: its slice (zero copy) or the copy window, twice (a copy-mode
// write stages the slice), plus slack.
func (j Job) HostBytes() int64 {
	slice := satMul(j.Entries, j.Config().RowBytes())
	return satAdd(satMul(alignUp(slice, engram.CapacityAlign), 2), slack)
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a < 0 || b < 0 || a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func alignUp(n, a int64) int64 {
	if n > math.MaxInt64-a {
		return math.MaxInt64 / a * a
	}
	return (n + a - 1) / a * a
}

// size prints a byte count in MiB or GiB.
func size(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
