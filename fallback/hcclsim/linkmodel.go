package hcclsim

import (
	"sync"
	"time"
)

// LinkModel is the optional cost of one-sided reads and writes between
// ranks (Options.Link; nil, the default, is off). On one host a remote
// read costs what a local one does, which hides what a cache of remote
// rows or a smarter plan saves; with a model every BatchGet/BatchPut to
// another rank also takes
//
//	Latency × ⌈reads / InFlight⌉ + bytes / Bandwidth
//
// on its link (the ordered pair of ranks), and batches on one link are
// served one after another, so concurrent readers of a peer share its
// bandwidth. Batches to the caller's own rank stay free. The delay is
// spent on the stream, after the bytes have moved.
type LinkModel struct {
	// Latency of one one-sided read (or write) round trip.
	Latency time.Duration
	// Bandwidth of one link in bytes per second (> 0).
	Bandwidth float64
	// InFlight is how many reads a link overlaps (≥ 1; 0 means 64, the
	// rows the fetch kernel posts per notify: ge-engram-semantics.md 2c).
	InFlight int

	mu   sync.Mutex
	busy map[[2]int]time.Time // link → when its last batch ends
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

// cost is the time the model charges a batch of reads moving bytes.
func (m *LinkModel) cost(reads int, bytes uint64) time.Duration {
	in := m.InFlight
	if in <= 0 {
		in = 64
	}
	d := time.Duration((reads+in-1)/in) * m.Latency
	if m.Bandwidth > 0 {
		d += time.Duration(float64(bytes) / m.Bandwidth * float64(time.Second))
	}
	return d
}

// charge books a batch on link (from, to) and waits until it ends.
func (m *LinkModel) charge(from, to, reads int, bytes uint64) {
	now, wait := time.Now, time.Sleep
	if m.now != nil {
		now, wait = m.now, m.wait
	}
	m.mu.Lock()
	if m.busy == nil {
		m.busy = make(map[[2]int]time.Time)
	}
	k := [2]int{from, to}
	t := now()
	start := t
	if b := m.busy[k]; b.After(start) {
		start = b
	}
	end := start.Add(m.cost(reads, bytes))
	m.busy[k] = end
	m.mu.Unlock()
	if d := end.Sub(t); d > 0 {
		wait(d)
	}
}
