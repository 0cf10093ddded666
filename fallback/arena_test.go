package fallback

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// checkArena verifies the allocator's invariants: blocks tile the arena in
// address order, no two neighbours are both free, the free index holds
// exactly the free blocks, the used index exactly the live allocations,
// and the byte counts match.
func checkArena(t *testing.T, a *arena) {
	t.Helper()
	a.mu.RLock()
	defer a.mu.RUnlock()
	// Find the first block through any block in the indexes.
	var first *block
	a.free.each(func(_ uint64, b *block) bool { first = b; return false })
	if first == nil {
		a.used.each(func(_ uint64, al *alloc) bool { first = al.blk; return false })
	}
	require.NotNil(t, first)
	for first.prev != nil {
		first = first.prev
	}
	var off, used uintptr
	nfree, nused := 0, 0
	for b := first; b != nil; b = b.next {
		require.Equal(t, off, b.off, "blocks must tile the arena")
		require.Zero(t, b.off%Alignment)
		require.Zero(t, b.size%Alignment)
		require.NotZero(t, b.size)
		if b.next != nil {
			require.Same(t, b, b.next.prev)
			require.False(t, b.free && b.next.free, "two adjacent free blocks at 0x%x", b.off)
		}
		if b.free {
			nfree++
			got, ok := a.free.get(freeKey(b))
			require.True(t, ok, "free block 0x%x missing from the free index", b.off)
			require.Same(t, b, got)
		} else {
			nused++
			used += b.size
			al, ok := a.used.get(uint64(b.off))
			require.True(t, ok, "used block 0x%x missing from the used index", b.off)
			require.Same(t, b, al.blk)
			require.LessOrEqual(t, al.size, b.size)
			require.Greater(t, al.size, b.size-Alignment)
		}
		off += b.size
	}
	require.Equal(t, a.size, off)
	require.Equal(t, nfree, a.free.Len())
	require.Equal(t, nused, a.used.Len())
	require.Equal(t, used, a.usedBytes)
}

// TestArenaRandomAgainstModel runs random allocate/free sequences and
// checks them against a model of the live ranges: no overlap, alignment,
// capacity, exact accounting, and full coalescing at the end.
func TestArenaRandomAgainstModel(t *testing.T) {
	r := newRand(t)
	const size = 8 << 20
	a, err := newArena(size, 0)
	require.NoError(t, err)
	defer a.unmap()

	var lives []*alloc
	var modelUsed uintptr
	for step := range 6000 {
		if len(lives) == 0 || r.IntN(100) < 55 {
			// Mostly small sizes, some large, some larger than what is left.
			var n uintptr
			switch r.IntN(10) {
			case 0:
				n = uintptr(1 + r.IntN(size/2))
			case 1:
				n = uintptr(1 + r.IntN(Alignment))
			default:
				n = uintptr(1 + r.IntN(64<<10))
			}
			al := a.allocate(n, where{})
			need := roundUp(n)
			if al == nil {
				// Refusal is only legal when no free block can hold it.
				_, _, _, largest := a.stats()
				require.Less(t, largest, need, "step %d: refused %d bytes with a %d-byte free block", step, n, largest)
				continue
			}
			require.Zero(t, al.addr%Alignment, "alignment")
			require.Equal(t, n, al.size)
			require.True(t, al.addr >= a.base && al.addr+need <= a.base+a.size, "inside the arena")
			for _, o := range lives {
				require.False(t, al.addr < o.addr+roundUp(o.size) && o.addr < al.addr+need,
					"step %d: 0x%x+%d overlaps 0x%x+%d", step, al.addr, need, o.addr, o.size)
			}
			// The memory is usable end to end.
			p := a.ptr(al)
			b := unsafeBytes(p, n)
			b[0], b[n-1] = 0xab, 0xcd
			lives = append(lives, al)
			modelUsed += need
		} else {
			i := r.IntN(len(lives))
			al := lives[i]
			lives[i] = lives[len(lives)-1]
			lives = lives[:len(lives)-1]
			require.Same(t, al, a.releaseAt(al.addr))
			require.True(t, al.freed.Load())
			require.Nil(t, a.releaseAt(al.addr), "double free must be refused")
			modelUsed -= roundUp(al.size)
		}
		require.Equal(t, modelUsed, a.usedBytes)
		if step%50 == 0 {
			checkArena(t, a)
			// Lookups agree with the model for every live allocation.
			for _, al := range lives {
				require.Same(t, al, a.lookup(al.addr))
				require.Same(t, al, a.lookup(al.addr+al.size-1))
				require.Same(t, al, a.exact(al.addr))
				if al.size > 1 {
					require.Nil(t, a.exact(al.addr+1))
				}
			}
		}
	}
	for _, al := range lives {
		require.NotNil(t, a.releaseAt(al.addr))
	}
	checkArena(t, a)
	require.Equal(t, 1, a.free.Len(), "everything freed must coalesce into one block")
	_, _, _, largest := a.stats()
	require.Equal(t, uintptr(size), largest)
}

// TestArenaBestFit: the smallest fitting hole is chosen, lowest address
// first among equals.
func TestArenaBestFit(t *testing.T) {
	a, err := newArena(1<<20, 0)
	require.NoError(t, err)
	defer a.unmap()
	// Holes of 4, 2 and 3 units, separated by live blocks.
	var keep, holes []*alloc
	for _, units := range []uintptr{4, 1, 2, 1, 3, 1} {
		al := a.allocate(units*Alignment, where{})
		require.NotNil(t, al)
		if len(keep) == len(holes) {
			holes = append(holes, al)
		} else {
			keep = append(keep, al)
		}
	}
	for _, h := range holes {
		require.NotNil(t, a.releaseAt(h.addr))
	}
	got := a.allocate(2*Alignment, where{})
	require.Equal(t, holes[1].addr, got.addr, "2 units go to the 2-unit hole")
	got = a.allocate(3*Alignment-100, where{})
	require.Equal(t, holes[2].addr, got.addr, "3 units go to the 3-unit hole")
	got = a.allocate(Alignment, where{})
	require.Equal(t, holes[0].addr, got.addr, "1 unit goes to the lowest smallest hole")
	checkArena(t, a)
}

// TestArenaReleaseAll: a reset frees every allocation and reports each.
func TestArenaReleaseAll(t *testing.T) {
	a, err := newArena(1<<20, 3)
	require.NoError(t, err)
	defer a.unmap()
	var als []*alloc
	for i := 1; i <= 10; i++ {
		als = append(als, a.allocate(uintptr(i*1000), where{}))
	}
	var seen int
	a.releaseAll(func(al *alloc) { seen++; require.Equal(t, int32(3), al.dev) })
	require.Equal(t, 10, seen)
	for _, al := range als {
		require.True(t, al.freed.Load())
		require.Nil(t, a.lookup(al.addr))
	}
	checkArena(t, a)
	require.Zero(t, a.usedBytes)
	require.NotNil(t, a.allocate(1<<20, where{}), "the whole arena is free again")
}

// TestArenaPurge: freed pages stay mapped (and a buffer freed and
// allocated again keeps its pages) until the bytes freed since the last
// purge exceed the budget; the purge then returns every large free block
// to the kernel (its pages read as zero).
func TestArenaPurge(t *testing.T) {
	const size = 64 << 20 // budget: an eighth, 8 MiB
	a, err := newArena(size, 0)
	require.NoError(t, err)
	defer a.unmap()
	require.Equal(t, uintptr(8<<20), a.purgeBudget())
	fill := func(al *alloc, v byte) {
		for i := uintptr(0); i < al.size; i += 4096 {
			a.mem[al.addr-a.base+i] = v
		}
	}
	al := a.allocate(4<<20, where{})
	fill(al, 0xab)
	require.NotNil(t, a.releaseAt(al.addr))
	again := a.allocate(4<<20, where{})
	require.Equal(t, al.addr, again.addr, "best fit reuses the freed block")
	require.Equal(t, byte(0xab), a.mem[again.addr-a.base+4096], "the freed pages were kept")
	require.NotNil(t, a.releaseAt(again.addr)) // 8 MiB freed: at the budget, no purge
	require.Equal(t, byte(0xab), a.mem[again.addr-a.base+4096])
	small := a.allocate(1<<20, where{})
	require.NotNil(t, a.releaseAt(small.addr)) // 9 MiB: a purge
	require.Zero(t, a.mem[again.addr-a.base+4096], "purged pages read as zero")
	require.Zero(t, a.dirty)
	checkArena(t, a)
}
