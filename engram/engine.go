package engram

import "fmt"

// Constants of the device fetch kernel (hicann/ops-transformer
// mc2/engram_fetch/op_kernel/engram_fetch_utils.h and
// op_kernel/arch35/engram_fetch_arch35.h). The values are those of the
// generation with the 5-argument GetCoreAssignment and the fix of !14556
// (seed 003): engram_fetch_utils.h lines 27-45 of that generation (a copy
// stored without its commit id; the public mirror's history has no
// engram), and the arch35 kernel's UB layout as the seed's reviews of
// !12459 and !14556 quote it (that kernel file is not in any stored
// copy).
const (
	// HandleArraySize is the channel budget per rank: an inference buffer
	// opens ceil(72/W) channels to each peer (HANDLE_ARRAY_SIZE;
	// elastic_buffer.cpp computes channelsPerRank the same way).
	HandleArraySize = 72
	// MaxChannelsPerRank is the number of channels a remote rank group
	// actually uses (MAX_CHANNELS_PER_RANK).
	MaxChannelsPerRank = 3
	// SQMaxPending is the depth of one channel's send queue
	// (HCOMM_SQ_MAX_PENDING): the read that brings the in-flight count to
	// it carries the completion flag and is followed by a drain.
	SQMaxPending = 32767
	// BatchCapacity is ENGRAM_BATCH_CAPACITY: reads per committed batch,
	// 16 in the kernel of the fix (engram_fetch_utils.h:31 of the
	// 5-argument generation; an older generation, with two 32 KiB relay
	// buffers and the 3-argument assignment, had 128). Engine.BatchCapacity
	// keeps it a knob.
	BatchCapacity = 16

	ubAlign        = 32              // UB_ALIGN (engram_fetch_utils.h:27)
	tileBytesMax   = 24 << 10        // TILE_BYTES_INFER_MAX: largest relay buffer (utils.h:29)
	relayBuffers   = 6               // RELAY_BUFFER_NUM_INFER (utils.h:37)
	hcommInitSize  = 512             // HCOMM_INIT_SIZE (utils.h:30)
	ubReserved     = 8 << 10         // UB_RESERVED_SIZE (utils.h:43)
	bytesPerIndex  = 4 + 4 + 3*4 + 1 // indices, tokenIdxInRank, rankIDs/positions/divisor, mask
	wqeBytes       = 64              // ENGRAM_WQE_BYTES: one WQE of a batch (utils.h:32)
	defaultCores   = 48              // AIV cores of an Ascend 910B/910_93 die (GetCoreNumAiv)
	defaultUBBytes = 192 << 10       // UB of one AIV core on those dies
)

// Variant selects which stored GetCoreAssignment the engine uses.
type Variant int

const (
	// Assign5 is the 5-argument assignment of the newest kernel: the
	// first (W−1)·used cores read remote ranks (used channels each), the
	// rest share the local tokens.
	Assign5 Variant = iota
	// Assign3 is the 3-argument assignment: contiguous core groups per
	// rank in rank order; the own-rank group copies locally and, in a
	// remote group, cores with index < min(channels, 3) read one channel
	// each.
	Assign3
)

func (v Variant) String() string {
	switch v {
	case Assign5:
		return "assign5"
	case Assign3:
		return "assign3"
	}
	return fmt.Sprintf("Variant(%d)", int(v))
}

// Engine models the AIV fetch kernel: how many cores it launches, the UB
// each has (which bounds the index batch), the batch and send-queue
// limits, and which core-assignment variant plans the work. It is a plain
// value.
type Engine struct {
	Cores         int     // block dim: all AIV cores (tiling: SetBlockDim(GetCoreNumAiv()))
	UBBytes       int     // UB size per core (tiling's ubSize)
	BatchCapacity int     // reads per committed batch
	SQDepth       int     // send-queue depth per channel
	Variant       Variant // core assignment
	// SharedSQCounter reproduces the kernel before ops-transformer !14556
	// (seed 003): one in-flight counter per core, reset whenever the core
	// switches channel, instead of one per (core, channel). With fewer
	// cores than ranks a core serves several remote ranks and a channel's
	// queue then overflows. Only for the regression test.
	SharedSQCounter bool
}

// DefaultEngine is the engine of a 910B-class die: 48 AIV cores with
// 192 KiB of UB, batches of 16 reads, send queues of 32767 entries, the
// newest core assignment.
func DefaultEngine() Engine {
	return Engine{Cores: defaultCores, UBBytes: defaultUBBytes, BatchCapacity: BatchCapacity, SQDepth: SQMaxPending, Variant: Assign5}
}

func (e Engine) check() error {
	switch {
	case e.Cores < 1 || e.Cores > 4096:
		return cfgErr("engine cores %d outside [1, 4096]", e.Cores)
	case e.UBBytes < 0:
		return cfgErr("engine UB %d bytes, must be ≥ 0", e.UBBytes)
	case e.BatchCapacity < 1:
		return cfgErr("engine batch capacity %d, must be ≥ 1", e.BatchCapacity)
	case e.SQDepth < 1:
		return cfgErr("engine send-queue depth %d, must be ≥ 1", e.SQDepth)
	case e.Variant != Assign5 && e.Variant != Assign3:
		return cfgErr("engine variant %v", e.Variant)
	}
	return nil
}

// ChannelsPerRank is the inference channel count to each peer:
// ceil(72/W), at least 1 (elastic_buffer.cpp; engram_fetch_arch35.h Init).
func ChannelsPerRank(w int) int {
	if w < 1 {
		return 1
	}
	return max(1, (HandleArraySize+w-1)/w)
}

// usedChannels is min(channelsPerRank, MAX_CHANNELS_PER_RANK).
func usedChannels(w int) int { return min(ChannelsPerRank(w), MaxChannelsPerRank) }

// CoreAssignment is the result of the 3-argument GetCoreAssignment: the
// rank a core serves, its index in that rank's core group and the group's
// size. Rank == numRanks means the core has no rank (the seed's initial
// value, reached only with fewer cores than ranks).
type CoreAssignment struct {
	Rank, IdxInGroup, GroupSize int
}

// GetCoreAssignment is the 3-argument assignment (engram_fetch_utils.h):
// base = tb/W cores per rank, the first tb%W ranks one more, groups
// contiguous in rank order.
func GetCoreAssignment(totalBlocks, aivID, numRanks int) CoreAssignment {
	res := CoreAssignment{Rank: numRanks}
	if numRanks <= 0 {
		return res
	}
	base, rem, acc := totalBlocks/numRanks, totalBlocks%numRanks, 0
	for r := 0; r < numRanks; r++ {
		g := base
		if r < rem {
			g++
		}
		if aivID < acc+g {
			return CoreAssignment{Rank: r, IdxInGroup: aivID - acc, GroupSize: g}
		}
		acc += g
	}
	return res
}

// Work is one stretch of a core's work in an index batch: the tokens of
// owner rank Rank at positions Offset, Offset+Stride, … of that rank's
// tokens (in token order), copied locally (Local) or read on channel
// Channel of the link to Rank.
type Work struct {
	Rank    int
	Local   bool
	Channel int
	Offset  int
	Stride  int
}

// GetCoreAssignment5 is the 5-argument assignment of the newest kernel
// (index id 69797684983 of ops-transformer, reviewed in !12459): with
// used = min((tb−1)/(W−1), min(channelsPerRank, 3)), the first (W−1)·used
// cores are remote — core k reads rank k/used (the own rank skipped) on
// channel k mod used, token stride used — and the remaining cores share
// the local tokens. W ≤ 1: every core is local. The kernel calls it only
// with tb ≥ W (with fewer cores see CoreWork); here tb < W gives ok false.
func GetCoreAssignment5(totalBlocks, aivID, numRanks, rankID, channelsPerRank int) (w Work, ok bool) {
	if totalBlocks < 1 || aivID < 0 || aivID >= totalBlocks {
		return Work{}, false
	}
	if numRanks <= 1 {
		return Work{Rank: rankID, Local: true, Offset: aivID, Stride: totalBlocks}, true
	}
	if totalBlocks < numRanks {
		return Work{}, false
	}
	used := min((totalBlocks-1)/(numRanks-1), min(channelsPerRank, MaxChannelsPerRank))
	remote := (numRanks - 1) * used
	if aivID < remote {
		r := aivID / used
		if r >= rankID {
			r++
		}
		ch := aivID % used
		return Work{Rank: r, Channel: ch, Offset: ch, Stride: used}, true
	}
	return Work{Rank: rankID, Local: true, Offset: aivID - remote, Stride: totalBlocks - remote}, true
}

// CoreWork lists the work of core aiv of a rank in every index batch.
// With at least as many cores as ranks it follows the engine's variant;
// with fewer (tb < W) core a serves ranks a, a+tb, a+2tb, …, each on
// channel 0 with stride 1, its own rank by local copy (ScatterByRank and
// FetchByRank of engram_fetch_arch35.h).
func (e Engine) CoreWork(aiv, numRanks, rankID int) []Work {
	return e.coreWork(nil, aiv, numRanks, rankID)
}

func (e Engine) coreWork(dst []Work, aiv, numRanks, rankID int) []Work {
	tb := e.Cores
	if numRanks > 1 && tb < numRanks {
		for r := aiv; r < numRanks; r += tb {
			dst = append(dst, Work{Rank: r, Local: r == rankID, Stride: 1})
		}
		return dst
	}
	if e.Variant == Assign5 {
		if w, ok := GetCoreAssignment5(tb, aiv, numRanks, rankID, ChannelsPerRank(numRanks)); ok {
			dst = append(dst, w)
		}
		return dst
	}
	a := GetCoreAssignment(tb, aiv, numRanks)
	switch {
	case a.Rank >= numRanks:
	case a.Rank == rankID:
		dst = append(dst, Work{Rank: a.Rank, Local: true, Offset: a.IdxInGroup, Stride: a.GroupSize})
	default:
		maxCh := usedChannels(numRanks)
		if a.IdxInGroup < maxCh {
			dst = append(dst, Work{Rank: a.Rank, Channel: a.IdxInGroup, Offset: a.IdxInGroup, Stride: min(a.GroupSize, maxCh)})
		}
	}
	return dst
}

// IndexBatch is the number of indices a core stages in UB at once for a
// fetch of t indices from numRanks ranks with rows of rowBytes:
// max(1, min(t, available/21)), where available is the UB left after what
// the kernel's Init reserves first, and 21 bytes are an index's share of
// the scatter buffers (indices, tokenIdxInRank, rankIDs, positions,
// divisor: 4 bytes each; the mask about 1).
//
// The reservation is the current kernel's: the HCOMM area (512 B), six
// relay buffers of the row rounded up to 32 B but at most 24 KiB
// (tileBytes_ = Ceil(hiddenBytes, UB_ALIGN)·UB_ALIGN, initialised to
// TILE_BYTES_INFER_MAX, engram_fetch_arch35.h:174 per the review of
// !12459; "usedUb 含 tileBytes*6"), the batch buffer of BatchCapacity
// 64-byte WQEs, the rank counts and offsets (4 B per rank each), the
// window addresses (8 B per rank), the channel handles (8 B per rank and
// channel, ceil(72/W) channels), the in-flight read counters of !14556
// (4 B per slot: one slot when every rank has a core, ceil(W/cores)
// otherwise; "rankReadCntBufSize 已计入 usedUb（engram_fetch_arch35.h:238）"),
// each rounded up to 32 B, and UB_RESERVED_SIZE (8 KiB). The stored
// kernel of the older generation (two 32 KiB relay buffers: Init's
// usedUb at engram_fetch_arch35.h:178-179 of that file) gives 5,401
// indices for 192 KiB, W 5 and 2560-byte rows; this layout gives 8,131.
func (e Engine) IndexBatch(t, numRanks int, rowBytes int64) int {
	a32 := func(n int64) int64 { return (n + ubAlign - 1) / ubAlign * ubAlign }
	w := int64(max(numRanks, 1))
	slots := int64(1)
	if cores := int64(max(e.Cores, 1)); cores < w {
		slots = (w + cores - 1) / cores
	}
	tile := min(a32(max(rowBytes, 0)), tileBytesMax)
	used := hcommInitSize + relayBuffers*tile + a32(int64(e.BatchCapacity)*wqeBytes) +
		2*a32(w*4) + a32(w*8) + a32(w*int64(ChannelsPerRank(numRanks))*8) + a32(slots*4)
	avail := int64(0)
	if int64(e.UBBytes) > used+ubReserved {
		avail = int64(e.UBBytes) - used - ubReserved
	}
	return int(max(1, min(int64(t), avail/bytesPerIndex)))
}
