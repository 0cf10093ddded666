package fallback

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Alignment is the alignment of every Malloc and MallocHost address and the
// granularity of the allocator, as on the device.
const Alignment = 512

// Freed memory goes back to the kernel in purges, not at each free: a
// loop that allocates and frees the same buffers (a training step's
// scratch) reuses their pages, where dropping them at every free made it
// refault them (zeroed huge pages, or a shared file's pages across
// processes) at every step: 80% of an Engram training step. A purge runs
// once the bytes freed since the last one exceed purgeBudget, at most
// once per purgeInterval (a loop that frees more than the budget at every
// step refaults its buffers once a second, not at every step), and drops
// the free blocks of at least releaseThreshold.
const (
	releaseThreshold = 2 << 20
	purgeInterval    = time.Second
)

// arena is one mmap'ed range outside the Go heap (a device's memory, or the
// pinned host memory of MallocHost) with a best-fit allocator: free blocks
// indexed by (size, offset), live allocations indexed by offset, and all
// blocks chained in address order so a free coalesces with its neighbours.
// Methods lock internally; lookups share a read lock.
type arena struct {
	mem  []byte
	base uintptr
	size uintptr
	dev  int32      // device id, or -1 for the pinned host arena
	file *arenaFile // the memfd behind a shareable arena (arena_file.go); nil for anonymous memory

	mu        sync.RWMutex
	free      treap[*block] // key: freeKey
	used      treap[*alloc] // key: offset
	usedBytes uintptr       // rounded sizes of live allocations
	liveBytes uintptr       // requested sizes of live allocations
	seq       uint64
	freed     map[uintptr]freedInfo // recently freed addresses, for messages
	dirty     uintptr               // bytes freed since the last purge (purge)
	lastPurge time.Time
}

// block is a run of the arena, free or allocated.
type block struct {
	off, size  uintptr
	free       bool
	prev, next *block
}

// alloc is one live allocation. addr and size never change; freed is set
// once, when the allocation is freed or released by a reset.
type alloc struct {
	addr  uintptr
	size  uintptr // as requested
	dev   int32
	seq   uint64
	blk   *block
	where where
	freed atomic.Bool
}

type freedInfo struct {
	size uintptr
	seq  uint64
}

const maxFreedInfo = 1 << 14

func newArena(size uintptr, dev int32) (*arena, error) {
	mem, err := unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %w", size, err)
	}
	// Huge pages where the kernel offers them, like the device's
	// huge-page-first allocations: large buffers are streamed through by
	// collectives and copies, and 4 KiB pages would cost a TLB miss every
	// 4 KiB of every stream. Advice only: no error if refused.
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE)
	return arenaOver(mem, dev, nil), nil
}

// arenaOver builds an arena over an established mapping.
func arenaOver(mem []byte, dev int32, f *arenaFile) *arena {
	a := &arena{mem: mem, base: uintptr(unsafe.Pointer(&mem[0])), size: uintptr(len(mem)), dev: dev, file: f}
	a.reset()
	return a
}

// reset makes the whole arena one free block.
func (a *arena) reset() {
	b := &block{off: 0, size: a.size, free: true}
	a.free.clear()
	a.used.clear()
	a.free.insert(freeKey(b), b)
	a.usedBytes, a.liveBytes, a.dirty = 0, 0, 0
	a.freed = make(map[uintptr]freedInfo)
}

func (a *arena) unmap() {
	if a.mem != nil {
		_ = unix.Munmap(a.mem)
		a.mem = nil
	}
	a.file.close()
}

// freeKey orders free blocks by size, then address, so the ceiling of a
// size is the smallest block that fits, lowest address first.
func freeKey(b *block) uint64 {
	return uint64(b.size/Alignment)<<32 | uint64(b.off/Alignment)
}

func roundUp(n uintptr) uintptr { return (n + Alignment - 1) &^ (Alignment - 1) }

func (a *arena) contains(addr uintptr) bool { return addr-a.base < a.size }

// allocate carves size bytes (rounded up to Alignment) out of the best
// fitting free block, or returns nil when no block is large enough.
func (a *arena) allocate(size uintptr, w where) *alloc {
	if size == 0 || size > a.size {
		return nil
	}
	need := roundUp(size)
	a.mu.Lock()
	defer a.mu.Unlock()
	key, b, ok := a.free.ceil(uint64(need/Alignment) << 32)
	if !ok {
		return nil
	}
	a.free.delete(key)
	if b.size > need {
		rest := &block{off: b.off + need, size: b.size - need, free: true, prev: b, next: b.next}
		if b.next != nil {
			b.next.prev = rest
		}
		b.next = rest
		b.size = need
		a.free.insert(freeKey(rest), rest)
	}
	b.free = false
	a.seq++
	al := &alloc{addr: a.base + b.off, size: size, dev: a.dev, seq: a.seq, blk: b, where: w}
	a.used.insert(uint64(b.off), al)
	a.usedBytes += need
	a.liveBytes += size
	delete(a.freed, al.addr)
	return al
}

// releaseAt frees the live allocation starting at addr and returns it, or
// returns nil (and frees nothing) when no live allocation starts there.
// Lookup and release happen under one lock, so two racing frees of one
// pointer cannot both succeed.
func (a *arena) releaseAt(addr uintptr) *alloc {
	a.mu.Lock()
	defer a.mu.Unlock()
	al, ok := a.used.get(uint64(addr - a.base))
	if !ok {
		return nil
	}
	a.releaseLocked(al)
	return al
}

func (a *arena) releaseLocked(al *alloc) {
	b := al.blk
	a.dirty += b.size
	al.freed.Store(true)
	a.used.delete(uint64(b.off))
	a.usedBytes -= b.size
	a.liveBytes -= al.size
	if len(a.freed) >= maxFreedInfo {
		clear(a.freed)
	}
	a.freed[al.addr] = freedInfo{size: al.size, seq: al.seq}
	b.free = true
	if n := b.next; n != nil && n.free {
		a.free.delete(freeKey(n))
		b.size += n.size
		b.next = n.next
		if n.next != nil {
			n.next.prev = b
		}
	}
	if p := b.prev; p != nil && p.free {
		a.free.delete(freeKey(p))
		p.size += b.size
		p.next = b.next
		if b.next != nil {
			b.next.prev = p
		}
		b = p
	}
	a.free.insert(freeKey(b), b)
	if a.dirty > a.purgeBudget() && time.Since(a.lastPurge) >= purgeInterval {
		a.purge()
	}
}

// purgeBudget is how many bytes may be freed before the free blocks'
// pages go back to the kernel: an eighth of the arena, at most 256 MiB.
func (a *arena) purgeBudget() uintptr {
	return max(min(a.size/8, 256<<20), releaseThreshold)
}

// purge returns the pages of every free block of at least
// releaseThreshold to the kernel; a.mu held.
func (a *arena) purge() {
	a.dirty, a.lastPurge = 0, time.Now()
	a.free.each(func(_ uint64, b *block) bool {
		if b.size >= releaseThreshold {
			a.dropPages(b.off, b.size)
		}
		return true
	})
}

// dropPages returns the whole pages of [off, off+size) to the kernel; they
// read as zero when touched again.
func (a *arena) dropPages(off, size uintptr) {
	const page = 4096
	start := (off + page - 1) &^ (page - 1)
	end := (off + size) &^ (page - 1)
	if end > start && a.mem != nil {
		if a.file != nil {
			// MADV_DONTNEED only drops this mapping's page-table entries
			// of a shared file; the pages go when the file's range does.
			a.file.punch(start, end-start)
			return
		}
		_ = unix.Madvise(a.mem[start:end], unix.MADV_DONTNEED)
	}
}

// releaseAll frees every live allocation, calling fn for each first (so the
// caller can record it as leaked), and returns the arena to one free block.
func (a *arena) releaseAll(fn func(*alloc)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.used.Len() == 0 {
		return
	}
	a.used.each(func(_ uint64, al *alloc) bool {
		if fn != nil {
			fn(al)
		}
		al.freed.Store(true)
		return true
	})
	a.reset()
	a.dropPages(0, a.size)
}

// lookup returns the live allocation containing addr, or nil.
func (a *arena) lookup(addr uintptr) *alloc {
	a.mu.RLock()
	_, al, ok := a.used.floor(uint64(addr - a.base))
	a.mu.RUnlock()
	if !ok || addr-al.addr >= al.size {
		return nil
	}
	return al
}

// exact returns the live allocation starting at addr, or nil.
func (a *arena) exact(addr uintptr) *alloc {
	a.mu.RLock()
	al, ok := a.used.get(uint64(addr - a.base))
	a.mu.RUnlock()
	if !ok {
		return nil
	}
	return al
}

// explain describes why addr is not a live allocation start, for messages.
func (a *arena) explain(addr uintptr) string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if f, ok := a.freed[addr]; ok {
		return fmt.Sprintf("it was freed (allocation #%d of %d bytes)", f.seq, f.size)
	}
	if _, al, ok := a.used.floor(uint64(addr - a.base)); ok {
		if addr-al.addr < al.size {
			return fmt.Sprintf("it points %d bytes into allocation 0x%x (%d bytes, #%d)", addr-al.addr, al.addr, al.size, al.seq)
		}
		if addr-al.addr < al.blk.size {
			return fmt.Sprintf("it lies in the padding past the end of allocation 0x%x (%d bytes)", al.addr, al.size)
		}
	}
	return "no allocation contains it (never allocated or freed)"
}

// stats returns the rounded bytes in use, the requested bytes live, the
// number of live allocations and the largest free block.
func (a *arena) stats() (used, live uintptr, n int, largest uintptr) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if k, _, ok := a.free.last(); ok {
		largest = uintptr(k>>32) * Alignment
	}
	return a.usedBytes, a.liveBytes, a.used.Len(), largest
}

// ptr returns the address of al as a pointer into the mapping.
func (a *arena) ptr(al *alloc) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(&a.mem[0]), al.addr-a.base)
}
