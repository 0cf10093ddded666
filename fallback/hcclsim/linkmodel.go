package hcclsim

import (
	"runtime"
	"sync"
	"time"
)

// LinkModel is the optional cost of one-sided reads and writes between
// ranks (Options.Link; nil, the default, is off). On one host a remote
// read costs what a local one does, which hides what a cache of remote
// rows or a smarter plan saves; with a model every BatchGet/BatchPut to
// another rank takes at least
//
//	Latency × ⌈reads / InFlight⌉ + bytes / Bandwidth
//
// from the moment it starts moving bytes. The model is of a pipelined
// link whose transfers a DMA engine moves while the link is busy:
//
//   - The simulator's own copy of the bytes runs inside that time, not
//     before it: a batch whose copy took longer than the link would takes
//     no extra time (its wall time is the larger of the two, not their
//     sum).
//   - Batches on one link (the ordered pair of ranks) share its bandwidth:
//     a batch's bytes start moving when the link's earlier batches have
//     moved theirs. Latency is not shared: a batch queued behind another
//     waits for the other's bytes, not for its round trips, as reads of a
//     pipelined link overlap.
//
// Batches to the caller's own rank stay free.
type LinkModel struct {
	// Latency of one one-sided read (or write) round trip.
	Latency time.Duration
	// Bandwidth of one link in bytes per second (> 0).
	Bandwidth float64
	// InFlight is how many reads of a batch overlap their round trips
	// (≥ 1). 0, the default, overlaps the whole batch: the inference
	// fetch kernel posts every read of a channel without waiting
	// (ReadNbi, a Commit every few reads) and waits once, in the fetch's
	// wait kernel (Drain); hicann/ops-transformer
	// mc2/engram_fetch/op_kernel/arch35/engram_fetch_arch35.h,
	// RemoteFetchRank (commit 0263bde4), and
	// ge-engram-semantics.md 2b "Fetch/wait split". 64 models the
	// training kernel's gather, which sends up to 64 rows per notify and
	// waits for each batch (ge-engram-semantics.md 2c).
	InFlight int

	mu   sync.Mutex
	busy map[[2]int]time.Time // link → when its bytes queued so far have moved
	now  func() time.Time     // clock and sleep, replaced by tests
	wait func(time.Duration)
}

// Public figures, rounded; use them as orders of magnitude, not as a
// measurement of a given machine.
//
// Bandwidths: Huawei's profiler takes, for the HCCL links of chip v4.1.0
// (the Atlas A2 / Ascend 910B generation), 28 GB/s as the reference
// bandwidth of HCCS and 25 GB/s of RDMA (Ascend/msprof,
// analysis/common_func/ms_constant/number_constant.py: HCCS_BANDWIDTH_V4_1_0
// = 28, RDMA_BANDWIDTH_V4_1_0 = 25, in GB/s). 28 GB/s is one direction of
// the 56 GB/s a link that the 910B's 392 GB/s over 7 HCCS links quotes
// (both directions), and a one-sided read moves its bytes one way; 25 GB/s
// is a 200 Gb/s RoCE port. Latencies: no public figure was found for a
// one-sided read on these links; a few µs is what RDMA read round trips
// commonly take (across a switch, more), so 2 µs on HCCS and 5 µs on RoCE
// are estimates.
//
// HCCSLink is an HCCS link of an Atlas A2 (910B) server.
func HCCSLink() *LinkModel { return &LinkModel{Latency: 2 * time.Microsecond, Bandwidth: 28e9} }

// RoCELink is a 200 Gb/s RoCE v2 port (25 GB/s) across a switch.
func RoCELink() *LinkModel { return &LinkModel{Latency: 5 * time.Microsecond, Bandwidth: 25e9} }

// cost is the time the model charges a batch of reads moving bytes on an
// idle link: the round trips and the bytes.
func (m *LinkModel) cost(reads int, bytes uint64) time.Duration {
	return m.latency(reads) + m.transfer(bytes)
}

// latency is the batch's round trips: ⌈reads / InFlight⌉ of them.
func (m *LinkModel) latency(reads int) time.Duration {
	in := m.InFlight
	if in <= 0 || in > reads {
		in = max(reads, 1)
	}
	return time.Duration((reads+in-1)/in) * m.Latency
}

// transfer is the time bytes occupy the link.
func (m *LinkModel) transfer(bytes uint64) time.Duration {
	if m.Bandwidth <= 0 {
		return 0
	}
	return time.Duration(float64(bytes) / m.Bandwidth * float64(time.Second))
}

// clock returns the model's clock and sleep.
func (m *LinkModel) clock() (func() time.Time, func(time.Duration)) {
	if m.now != nil {
		return m.now, m.wait
	}
	return time.Now, waitPrecisely
}

// sleepSlack is how much shorter than asked waitPrecisely sleeps before
// it polls: a timer wakes a sleeper tens of microseconds late on an idle
// machine (more under load), which would charge a batch of a few
// microseconds many times its cost.
const sleepSlack = 200 * time.Microsecond

// waitPrecisely waits d: it sleeps all but sleepSlack of it, then polls
// the clock, yielding the processor between polls (a busy link is a busy
// device, but other goroutines run meanwhile).
func waitPrecisely(d time.Duration) {
	end := time.Now().Add(d)
	if d > sleepSlack {
		time.Sleep(d - sleepSlack)
	}
	for time.Now().Before(end) {
		runtime.Gosched()
	}
}

// charge books a batch on link (from, to) that started at start (before
// the simulator copied its bytes) and waits until the link would have
// finished it: its bytes move after the link's earlier batches' bytes,
// its round trips overlap theirs.
func (m *LinkModel) charge(from, to, reads int, bytes uint64, start time.Time) {
	now, wait := m.clock()
	m.mu.Lock()
	if m.busy == nil {
		m.busy = make(map[[2]int]time.Time)
	}
	k := [2]int{from, to}
	moved := start
	if b := m.busy[k]; b.After(moved) {
		moved = b
	}
	moved = moved.Add(m.transfer(bytes))
	m.busy[k] = moved
	m.mu.Unlock()
	end := moved.Add(m.latency(reads))
	if d := end.Sub(now()); d > 0 {
		wait(d)
	}
}
