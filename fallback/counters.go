package fallback

import (
	"sync/atomic"

	"github.com/ascend-go/cann/acl"
)

// Direction is the direction of a copy, as counted.
type Direction uint8

// Copy directions.
const (
	HostToHost Direction = iota
	HostToDevice
	DeviceToHost
	DeviceToDevice
)

var directionNames = [...]string{"H2H", "H2D", "D2H", "D2D"}

// String returns "H2H", "H2D", "D2H" or "D2D".
func (d Direction) String() string {
	if int(d) < len(directionNames) {
		return directionNames[d]
	}
	return "Direction(?)"
}

func directionOf(srcDev, dstDev bool) Direction {
	switch {
	case srcDev && dstDev:
		return DeviceToDevice
	case srcDev:
		return DeviceToHost
	case dstDev:
		return HostToDevice
	}
	return HostToHost
}

// DirectionOfKind maps a copy kind to the direction it is counted under
// (ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE counts as H2D, the inner and inter
// device kinds as D2D). ACL_MEMCPY_DEFAULT and undefined kinds report false.
func DirectionOfKind(k acl.MemcpyKind) (Direction, bool) {
	switch k {
	case acl.MemcpyHostToHost:
		return HostToHost, true
	case acl.MemcpyHostToDevice, acl.MemcpyHostToBufToDevice:
		return HostToDevice, true
	case acl.MemcpyDeviceToHost:
		return DeviceToHost, true
	case acl.MemcpyDeviceToDevice, acl.MemcpyInnerDeviceToDevice, acl.MemcpyInterDeviceToDevice:
		return DeviceToDevice, true
	}
	return 0, false
}

// Traffic counts copies in one direction.
type Traffic struct {
	Copies uint64
	Bytes  uint64
}

// Counters is a snapshot of what the NPU has done since New or the last
// ResetCounters (cumulative fields) and of what is live now (Live*,
// Streams, Events, Contexts, Registrations).
type Counters struct {
	H2H, H2D, D2H, D2D Traffic

	Memsets     uint64 // Memset and MemsetAsync calls executed
	MemsetBytes uint64
	Launches    uint64 // kernel launches counted by CountLaunch
	Tasks       uint64 // stream work tasks executed (copies, memsets, model and HCCL tasks)
	// InlineTasks counts tasks a synchronizing caller ran itself (HCCL
	// tasks, while the stream's goroutine was idle); SyncParks counts
	// synchronizes that slept until woken (a wake-up of the caller's
	// thread). Both show what a synchronize cost (stream.go, runInline).
	InlineTasks, SyncParks uint64

	Allocs, Frees         uint64 // device Malloc / Free
	HostAllocs, HostFrees uint64 // MallocHost / FreeHost

	LiveBytes     []uint64 // per device: requested bytes of live allocations
	LiveAllocs    []int    // per device: live allocations
	LiveHostBytes uint64   // requested bytes of live MallocHost blocks

	Streams       int // streams created by the program and not destroyed
	Events        int // live events
	Contexts      int // live contexts created by CreateContext
	Registrations int // live host registrations
}

// Copies is the number of copies in all directions.
func (c Counters) Copies() uint64 { return c.H2H.Copies + c.H2D.Copies + c.D2H.Copies + c.D2D.Copies }

// Traffic returns the counts of one direction.
func (c Counters) Traffic(d Direction) Traffic {
	switch d {
	case HostToHost:
		return c.H2H
	case HostToDevice:
		return c.H2D
	case DeviceToHost:
		return c.D2H
	}
	return c.D2D
}

type traffic struct{ copies, bytes atomic.Uint64 }

// counters are updated with atomics so the copy path takes no lock.
type counters struct {
	dir                   [4]traffic
	memsets, memsetBytes  atomic.Uint64
	launches, tasks       atomic.Uint64
	inline, syncParks     atomic.Uint64
	allocs, frees         atomic.Uint64
	hostAllocs, hostFrees atomic.Uint64
}

func (c *counters) copied(d Direction, bytes uint64) {
	c.dir[d&3].copies.Add(1)
	c.dir[d&3].bytes.Add(bytes)
}

func (c *counters) memset(bytes uint64) {
	c.memsets.Add(1)
	c.memsetBytes.Add(bytes)
}

// Counters returns a snapshot of the counters.
func (n *NPU) Counters() Counters {
	if n == nil {
		return Counters{}
	}
	c := &n.ctr
	out := Counters{
		Memsets: c.memsets.Load(), MemsetBytes: c.memsetBytes.Load(),
		Launches: c.launches.Load(), Tasks: c.tasks.Load(),
		InlineTasks: c.inline.Load(), SyncParks: c.syncParks.Load(),
		Allocs: c.allocs.Load(), Frees: c.frees.Load(),
		HostAllocs: c.hostAllocs.Load(), HostFrees: c.hostFrees.Load(),
	}
	for i, t := range []*Traffic{&out.H2H, &out.H2D, &out.D2H, &out.D2D} {
		t.Copies, t.Bytes = c.dir[i].copies.Load(), c.dir[i].bytes.Load()
	}
	if !n.enter() {
		return out
	}
	defer n.exit()
	for _, d := range n.devs {
		_, live, cnt, _ := d.arena.stats()
		out.LiveBytes = append(out.LiveBytes, uint64(live))
		out.LiveAllocs = append(out.LiveAllocs, cnt)
	}
	_, live, _, _ := n.host.stats()
	out.LiveHostBytes = uint64(live)
	n.mu.RLock()
	out.Streams, out.Events = len(n.streams), len(n.events)
	for _, ctx := range n.contexts {
		if !ctx.isDefault {
			out.Contexts++
		}
	}
	n.mu.RUnlock()
	out.Registrations = int(n.nregs.Load())
	return out
}

// ResetCounters zeroes the cumulative counters (the live ones describe the
// current state and are unaffected).
func (n *NPU) ResetCounters() {
	if n == nil {
		return
	}
	c := &n.ctr
	for i := range c.dir {
		c.dir[i].copies.Store(0)
		c.dir[i].bytes.Store(0)
	}
	for _, v := range []*atomic.Uint64{&c.memsets, &c.memsetBytes, &c.launches, &c.tasks, &c.inline, &c.syncParks, &c.allocs, &c.frees, &c.hostAllocs, &c.hostFrees} {
		v.Store(0)
	}
}
