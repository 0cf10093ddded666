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
			posts := e.Plan(idx, w, rank, entries)
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
	posts := e.Plan(idx, 4, 0, 10)
	peak, err := engram.CheckSendQueues(posts, e.SQDepth)
	require.NoError(t, err)
	assert.Equal(t, engram.SQMaxPending, peak, "the fixed kernel fills a queue exactly to its depth before draining")
	e.SharedSQCounter = true
	_, err = engram.CheckSendQueues(e.Plan(idx, 4, 0, 10), e.SQDepth)
	require.ErrorContains(t, err, "overflows")
}

// sqEngine has 2 cores for 4 ranks and an index batch of 1000.
func sqEngine() engram.Engine {
	e := engram.Engine{Cores: 2, BatchCapacity: engram.BatchCapacity, SQDepth: engram.SQMaxPending}
	for e.UBBytes = 64 << 10; e.IndexBatch(1<<20, 4) < 1000; e.UBBytes += 21 {
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
