package engram_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/engram"
)

// The seed's examples of GetCoreAssignment (3 arguments): base = tb/W,
// the first tb%W ranks get one more core, contiguous groups.
func TestGetCoreAssignment(t *testing.T) {
	for _, k := range []struct {
		tb, aiv, w int
		want       engram.CoreAssignment
	}{
		{48, 0, 5, engram.CoreAssignment{Rank: 0, IdxInGroup: 0, GroupSize: 10}},
		{48, 29, 5, engram.CoreAssignment{Rank: 2, IdxInGroup: 9, GroupSize: 10}},
		{48, 30, 5, engram.CoreAssignment{Rank: 3, IdxInGroup: 0, GroupSize: 9}},
		{48, 47, 5, engram.CoreAssignment{Rank: 4, IdxInGroup: 8, GroupSize: 9}},
		{8, 8, 8, engram.CoreAssignment{Rank: 8}},                                  // no such core
		{3, 2, 8, engram.CoreAssignment{Rank: 2, IdxInGroup: 0, GroupSize: 1}},     // tb < W
		{3, 3, 8, engram.CoreAssignment{Rank: 8}},                                  // beyond tb
		{72, 71, 1, engram.CoreAssignment{Rank: 0, IdxInGroup: 71, GroupSize: 72}}, // local mode
	} {
		assert.Equal(t, k.want, engram.GetCoreAssignment(k.tb, k.aiv, k.w), "tb %d aiv %d W %d", k.tb, k.aiv, k.w)
	}
}

func TestGetCoreAssignment5(t *testing.T) {
	// tb 48, W 8, rank 2: channels ceil(72/8) = 9, used = min(47/7, 3) = 3,
	// 21 remote cores (rank 2 skipped), 27 local ones.
	for _, k := range []struct {
		aiv  int
		want engram.Work
	}{
		{0, engram.Work{Rank: 0, Channel: 0, Offset: 0, Stride: 3}},
		{2, engram.Work{Rank: 0, Channel: 2, Offset: 2, Stride: 3}},
		{6, engram.Work{Rank: 3, Channel: 0, Offset: 0, Stride: 3}},
		{20, engram.Work{Rank: 7, Channel: 2, Offset: 2, Stride: 3}},
		{21, engram.Work{Rank: 2, Local: true, Offset: 0, Stride: 27}},
		{47, engram.Work{Rank: 2, Local: true, Offset: 26, Stride: 27}},
	} {
		got, ok := engram.GetCoreAssignment5(48, k.aiv, 8, 2, engram.ChannelsPerRank(8))
		require.True(t, ok)
		assert.Equal(t, k.want, got, "aiv %d", k.aiv)
	}
	// tb 9, W 8: used = min(8/7, 3) = 1: seven remote cores, two local.
	got, _ := engram.GetCoreAssignment5(9, 7, 8, 0, engram.ChannelsPerRank(8))
	assert.Equal(t, engram.Work{Rank: 0, Local: true, Offset: 0, Stride: 2}, got)
	got, _ = engram.GetCoreAssignment5(9, 0, 8, 0, engram.ChannelsPerRank(8))
	assert.Equal(t, engram.Work{Rank: 1, Channel: 0, Offset: 0, Stride: 1}, got)
	// W 1: all local.
	got, _ = engram.GetCoreAssignment5(4, 3, 1, 0, 72)
	assert.Equal(t, engram.Work{Rank: 0, Local: true, Offset: 3, Stride: 4}, got)
	_, ok := engram.GetCoreAssignment5(3, 0, 8, 0, 9) // fewer cores than ranks: not this variant's case
	assert.False(t, ok)
}

func TestCoreWork(t *testing.T) {
	// Fewer cores than ranks: core a serves a, a+tb, …, channel 0, stride 1;
	// its own rank by local copy.
	e := engram.Engine{Cores: 3, UBBytes: 1 << 20, BatchCapacity: 16, SQDepth: 100}
	assert.Equal(t, []engram.Work{{Rank: 1, Local: true, Stride: 1}, {Rank: 4, Stride: 1}, {Rank: 7, Stride: 1}}, e.CoreWork(1, 8, 1))
	// Three-argument variant, own-rank group: tb 8, W 4, rank 1 owns
	// cores 2 and 3, local with stride 2; rank 0's group (cores 0, 1)
	// reads on channels 0 and 1 with stride min(2, 3) = 2.
	e = engram.Engine{Cores: 8, UBBytes: 1 << 20, BatchCapacity: 16, SQDepth: 100, Variant: engram.Assign3}
	assert.Equal(t, []engram.Work{{Rank: 1, Local: true, Offset: 1, Stride: 2}}, e.CoreWork(3, 4, 1))
	assert.Equal(t, []engram.Work{{Rank: 0, Channel: 1, Offset: 1, Stride: 2}}, e.CoreWork(1, 4, 1))
	// A group larger than 3: only the first three cores read.
	e.Cores = 20
	assert.Empty(t, e.CoreWork(3, 4, 1))
	assert.Equal(t, engram.ChannelsPerRank(4), 18)
	assert.Equal(t, engram.ChannelsPerRank(100), 1)
}

// Every in-range remote token is posted exactly once with the right row,
// the last read of each (peer, channel, batch) carries the completion
// flag, and the fixed engine never overflows a queue, for both variants
// and for fewer cores than ranks.
func TestPlanInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, e := range []engram.Engine{
		engram.DefaultEngine(),
		{Cores: 7, UBBytes: 90000, BatchCapacity: 5, SQDepth: 50, Variant: engram.Assign3},
		{Cores: 2, UBBytes: 90000, BatchCapacity: 16, SQDepth: 40},
	} {
		for _, w := range []int{2, 3, 8} {
			const entries = 50
			idx := uniform(rng, 3000, int64(w)*entries+20) // some out of range
			idx[0] = -1
			rank := w - 1
			posts := e.Plan(idx, w, rank, entries, 64)
			seen := make([]int, len(idx))
			for _, p := range posts {
				g := idx[p.Token]
				require.Equal(t, g/entries, p.Peer)
				require.Equal(t, g%entries, p.Row)
				require.NotEqual(t, int32(rank), p.Peer)
				seen[p.Token]++
			}
			for i, g := range idx {
				remote := g >= 0 && int64(g) < int64(w)*entries && int(g/entries) != rank
				if remote {
					require.Equal(t, 1, seen[i], "token %d (index %d) posted %d times", i, g, seen[i])
				} else {
					require.Zero(t, seen[i])
				}
			}
			_, err := engram.CheckSendQueues(posts, e.SQDepth)
			require.NoError(t, err, "%+v W %d", e, w)
		}
	}
}

// The seed's bug (ops-transformer !14556): with fewer cores than ranks a
// core switches between the channels of its remote ranks, and one counter
// shared by them — zeroed at every switch — never reaches the depth, so
// no drain is posted and a channel's queue overflows. The per-(core,
// channel) counters of the fix drain in time.
func TestPlanSharedCounterOverflows(t *testing.T) {
	e := sqEngine()
	idx := alternating(70000, 10)
	posts := e.Plan(idx, 4, 0, 10, 64)
	peak, err := engram.CheckSendQueues(posts, e.SQDepth)
	require.NoError(t, err)
	assert.Equal(t, engram.SQMaxPending, peak, "the fixed kernel fills a queue exactly to its depth before draining")
	e.SharedSQCounter = true
	_, err = engram.CheckSendQueues(e.Plan(idx, 4, 0, 10, 64), e.SQDepth)
	require.ErrorContains(t, err, "overflows")
}

// sqEngine has 2 cores for 4 ranks and an index batch of 1000.
func sqEngine() engram.Engine {
	e := engram.Engine{Cores: 2, BatchCapacity: engram.BatchCapacity, SQDepth: engram.SQMaxPending}
	for e.UBBytes = 64 << 10; e.IndexBatch(1<<20, 4, 64) < 1000; e.UBBytes += 21 {
	}
	return e
}

// alternating gives indices of ranks 1 and 3 (both served by core 1 when
// 2 cores serve 4 ranks), alternating.
func alternating(n int, entries int32) []int32 {
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = entries*int32(1+2*(i%2)) + int32(i)%entries
	}
	return idx
}

// The index batch of the current kernel's UB layout (issue 26 item 2),
// each want summed here by hand from the layout: 512 B HCOMM, six relay
// buffers of min(align32(row), 24 KiB), 16 WQEs of 64 B, rank counts and
// offsets (4 B/rank), window addresses (8 B/rank), channel handles
// (8 B per rank and channel, ceil(72/W) channels), the in-flight counters
// (4 B per slot), each rounded up to 32 B, and 8 KiB reserved; 21 B per
// index of what is left.
func TestIndexBatchCurrentLayout(t *testing.T) {
	def := engram.DefaultEngine()
	for _, k := range []struct {
		name    string
		e       engram.Engine
		t, w    int
		rb      int64
		want    int
		layout  int // the bytes reserved before the indices
		ubBytes int
	}{
		// The numbers: 192 KiB, W 5, 2560-byte rows: 512 + 6·2560 +
		// 1024 + 32 + 32 + 64 + align32(5·15·8 = 600) = 608 + 32 (one
		// slot) + 8192 = 25,856; (196,608 − 25,856)/21 = 8,131.
		{"issue", def, 1 << 20, 5, 2560, 8131, 25856, 192 << 10},
		// A row beyond 24 KiB: six 24 KiB relays: 512 + 147,456 + 1024 +
		// 32 + 32 + 64 + 608 + 32 + 8192 = 157,952 → 38,656/21 = 1,840.
		{"big rows", def, 1 << 20, 5, 1 << 20, 1840, 157952, 192 << 10},
		// Fewer tokens than fit: all of them.
		{"few tokens", def, 100, 5, 2560, 100, 25856, 192 << 10},
		// 2 cores for 100 ranks: 50 counter slots (224 B), one channel
		// per rank: 512 + 6·64 + 1024 + 416 + 416 + 800 + 800 + 224 +
		// 8192 = 12,768 → 183,840/21 = 8,754.
		{"2 cores W100", engram.Engine{Cores: 2, UBBytes: 192 << 10, BatchCapacity: 16, SQDepth: 1}, 1 << 20, 100, 64, 8754, 12768, 192 << 10},
		// UB too small for the layout: one index at a time.
		{"tiny UB", engram.Engine{Cores: 48, UBBytes: 10000, BatchCapacity: 16, SQDepth: 1}, 1 << 20, 2, 64, 1, 0, 0},
	} {
		assert.Equal(t, k.want, k.e.IndexBatch(k.t, k.w, k.rb), k.name)
		if k.layout > 0 && k.t > k.want {
			assert.Equal(t, k.want, (k.ubBytes-k.layout)/21, "%s: the hand sum", k.name)
		}
	}
}

// Batch commits follow ENGRAM_BATCH_CAPACITY = 16 (issue 26 item 1): W 5,
// rank 0, 48 cores: each remote rank's tokens are split over 3 channels
// (stride 3), and a channel of c reads commits ceil(c/16) times; no batch
// holds more than 16 reads. The knob still works: 128 gives fewer.
func TestBatchCapacityIsTheKernels(t *testing.T) {
	require.Equal(t, 16, engram.BatchCapacity)
	e := engram.DefaultEngine()
	require.Equal(t, 16, e.BatchCapacity)
	const entries = 1000
	rng := rand.New(rand.NewPCG(4, 4))
	per := []int{0, 700, 33, 1, 160} // tokens per owner rank (rank 0 is this one)
	var idx []int32
	for r, n := range per {
		for range n {
			idx = append(idx, int32(r*entries+rng.IntN(entries)))
		}
	}
	rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	want := func(capacity int) int {
		n := 0
		for _, c := range per[1:] {
			for ch := 0; ch < 3; ch++ {
				reads := max(0, (c-ch+2)/3)
				n += (reads + capacity - 1) / capacity
			}
		}
		return n
	}
	count := func(e engram.Engine) (commits, longest int) {
		run := map[[2]int32]int{}
		for _, p := range e.Plan(idx, 5, 0, entries, 2560) {
			k := [2]int32{p.Peer, int32(p.Channel)}
			run[k]++
			longest = max(longest, run[k])
			if p.Commit() {
				commits++
				run[k] = 0
			}
		}
		return commits, longest
	}
	commits, longest := count(e)
	assert.Equal(t, want(16), commits)
	assert.Equal(t, 16, longest)
	e.BatchCapacity = 128
	commits, longest = count(e)
	assert.Equal(t, want(128), commits)
	assert.Equal(t, 128, longest)
}

// The review's worked example (issue 26 item 1): 2 cores, W 5, 40,000
// reads for each remote rank in one index batch. Core a serves ranks a,
// a+2, … on channel 0; per rank the 32,767th read drains (and commits a
// batch of 32,767 − 2047·16 = 15), the other 7,233 commit in 453 batches:
// 2,048 + 453 = 2,501 per rank, 10,004 in all (1,252 with 128).
func TestBatchCommitsWorkedExample(t *testing.T) {
	const entries = 100000
	idx := make([]int32, 4*40000)
	for i := range idx {
		idx[i] = int32((1+i%4)*entries + i%entries)
	}
	e := engram.DefaultEngine()
	e.Cores, e.UBBytes = 2, 4<<20 // one index batch
	commits := func() int {
		n := 0
		for _, p := range e.Plan(idx, 5, 0, entries, 2560) {
			if p.Commit() {
				n++
			}
		}
		return n
	}
	assert.Equal(t, 10004, commits())
	e.BatchCapacity = 128
	assert.Equal(t, 1252, commits())
}
