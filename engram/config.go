package engram

import (
	"fmt"
	"math"
)

// Limits of the seed (hicann/ops-transformer @125200e0:
// mc2/common/torch_extension/csrc/elastic_buffer.cpp and
// mc2/engram_fetch/op_kernel/engram_fetch_utils.h).
const (
	MinRanks      = 2              // HCCL_MIN_RANK_SIZE: sliced mode needs a peer
	MaxRanks      = 1024           // HCCL_MAX_RANK_SIZE
	MaxGlobalRows = math.MaxInt32  // W·E ≤ INT32_MAX: indices are int32
	CapacityAlign = 2 << 20        // num_cpu_bytes must be a multiple of 2 MiB
	MaxCopyChunk  = 0x7fffffff     // engram_write copies in chunks of at most this many bytes
	maxRowBytes   = math.MaxUint32 // the kernel narrows hiddenBytes to uint32 (review of !12459, ISSUE-001)
	maxSFRowBytes = math.MaxUint16 // the SF copy's blockLen is a u16 (same review)
	sizeHintAlign = 32             // get_engram_storage_size_hint rounds each entry to 32 B
)

// Config describes a Buffer. The zero values of Policy and Engine are the
// defaults (IndexError, DefaultEngine()).
type Config struct {
	// EntriesPerRank is E: rows of the table this rank owns (sliced mode)
	// or the whole table (local mode). 0 is allowed: every index is then
	// out of range.
	EntriesPerRank int64
	// Hidden is the number of elements of a row (> 0).
	Hidden int
	// DType is the storage element type.
	DType DType
	// Capacity is the size of the internal pinned window of copy-mode
	// writes (num_cpu_bytes): a multiple of 2 MiB; 0 means no window in
	// sliced mode (a copy-mode write of a non-empty slice then fails) and
	// "the storage size rounded up to 2 MiB" in local mode, as the seed's
	// full-vocab local mode derives it.
	Capacity int64
	// SFPacks is the number of scale-factor packs per row (0: none). Only
	// fp8 storage carries scale factors, and fp8 storage must.
	SFPacks int
	// SFType is the scale-factor element type (SFFP32 or SFE8M0) when
	// SFPacks > 0.
	SFType SFType
	// Policy is what a fetch does with out-of-range indices.
	Policy IndexPolicy
	// MaxTokensPerRank bounds the indices of a training fetch
	// (num_max_tokens_per_rank). A value > 0 makes a training buffer (the
	// seed's with_grad): sliced mode only, zero-copy storage only, no
	// Capacity. 0: an inference buffer, no training path.
	MaxTokensPerRank int
	// Engine models the device's fetch kernel; the zero value means
	// DefaultEngine().
	Engine Engine
	// CacheRows is C, the rows of the optional hot-row cache: a per-rank
	// device cache of other ranks' rows that inference fetches read
	// locally on a hit (sliced mode only; 0: none). See Buffer.Invalidate.
	CacheRows int
}

// Training reports whether the config is a training buffer's
// (MaxTokensPerRank > 0: the seed's with_grad=True).
func (c Config) Training() bool { return c.MaxTokensPerRank > 0 }

// RowBytes is Hidden × the element size: rows are packed at this stride.
func (c Config) RowBytes() int64 { return int64(c.Hidden) * int64(c.DType.Size()) }

// SFRowBytes is the scale-factor bytes of one row.
func (c Config) SFRowBytes() int64 { return int64(c.SFPacks) * int64(c.SFType.Size()) }

func cfgErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...)
}

// Check validates the config for a world of worldSize ranks (1: local
// mode) as New does, without a device: a program can refuse a bad
// config before it allocates anything or starts its ranks.
func (c Config) Check(worldSize int) error { return c.check(worldSize) }

// check validates the config for a world of w ranks (1 = local mode),
// with the checks of the ElasticBuffer constructor, engram_write and the
// fetch tiling (see the Limits above), each error naming the value and
// its limit.
func (c *Config) check(w int) error {
	if w != 1 && (w < MinRanks || w > MaxRanks) {
		return cfgErr("rank size %d outside [%d, %d] (1 rank is local mode)", w, MinRanks, MaxRanks)
	}
	if c.Hidden <= 0 {
		return cfgErr("hidden %d, must be > 0", c.Hidden)
	}
	if c.CacheRows < 0 || c.CacheRows > 0 && w == 1 {
		return cfgErr("cache rows %d: must be ≥ 0, and 0 in local mode (it caches other ranks' rows)", c.CacheRows)
	}
	if c.DType.Size() == 0 {
		return cfgErr("dtype %v, want one of %v", c.DType, DTypes())
	}
	if c.EntriesPerRank < 0 || c.EntriesPerRank > math.MaxInt32 {
		return cfgErr("entries per rank %d outside [0, %d]", c.EntriesPerRank, math.MaxInt32)
	}
	if c.EntriesPerRank > 0 && int64(w) > MaxGlobalRows/c.EntriesPerRank {
		return cfgErr("rank size %d × entries per rank %d = %d exceeds INT32_MAX (%d)",
			w, c.EntriesPerRank, int64(w)*c.EntriesPerRank, int64(MaxGlobalRows))
	}
	if int64(c.Hidden) > math.MaxInt64/int64(c.DType.Size()) {
		return cfgErr("hidden %d × %d-byte %v overflows int64", c.Hidden, c.DType.Size(), c.DType)
	}
	if rb := c.RowBytes(); rb > maxRowBytes {
		return cfgErr("row of %d bytes (hidden %d × %v) exceeds the kernel's %d", rb, c.Hidden, c.DType, int64(maxRowBytes))
	}
	if c.Capacity < 0 || c.Capacity%CapacityAlign != 0 {
		return cfgErr("capacity %d bytes, must be a non-negative multiple of 2 MiB (%d)", c.Capacity, CapacityAlign)
	}
	switch {
	case c.SFPacks < 0:
		return cfgErr("scale-factor packs %d, must be ≥ 0", c.SFPacks)
	case c.SFPacks > 0 && c.SFType != SFFP32 && c.SFType != SFE8M0:
		return cfgErr("scale-factor dtype %v with %d packs, want fp32 or e8m0", c.SFType, c.SFPacks)
	case c.SFPacks == 0 && c.SFType != SFNone:
		return cfgErr("scale-factor dtype %v with 0 packs", c.SFType)
	case c.SFPacks > 0 && !c.DType.FP8():
		return cfgErr("storage dtype must be float8_e4m3fn/float8_e5m2 when sf is provided, got %v", c.DType)
	case c.SFPacks == 0 && c.DType.FP8():
		return cfgErr("storage dtype must be bfloat16/float16/float32 when sf is not provided, got %v", c.DType)
	case c.SFRowBytes() > maxSFRowBytes:
		return cfgErr("scale factors of %d bytes per row exceed %d", c.SFRowBytes(), maxSFRowBytes)
	}
	if c.MaxTokensPerRank < 0 || c.MaxTokensPerRank > math.MaxInt32/max(w, 1) {
		return cfgErr("max tokens per rank %d outside [0, %d]", c.MaxTokensPerRank, math.MaxInt32/max(w, 1))
	}
	// Training (with_grad) is sliced mode over zero-copy storage only:
	// the seed's local mode "不支持训练" and with_grad "不接受
	// zero_copy=False" (see doc.go).
	if c.Training() && w == 1 {
		return cfgErr("training (MaxTokensPerRank %d) needs a communicator: local mode (group=None) does not support training", c.MaxTokensPerRank)
	}
	if c.Training() && c.Capacity != 0 {
		return cfgErr("training (MaxTokensPerRank %d) with a copy window of %d bytes: training storage is registered in place (zero copy), it has no window", c.MaxTokensPerRank, c.Capacity)
	}
	if c.Policy != IndexError && c.Policy != IndexZeroFill {
		return cfgErr("index policy %v", c.Policy)
	}
	if c.Engine == (Engine{}) {
		c.Engine = DefaultEngine()
	}
	return c.Engine.check()
}

// StorageSizeHint is get_engram_storage_size_hint: the bytes of pinned
// host memory a table of entries rows needs, each entry (row plus its
// fp8 scale-factor packs, ceil(hidden/32) fp32 packs for 1-byte dtypes)
// rounded up to 32 bytes and the total to 2 MiB (0 for 0 entries). Rows
// are still packed at Hidden × elem bytes: the rounding is capacity only.
func StorageSizeHint(entries int64, hidden int, dt DType) (int64, error) {
	if entries < 0 {
		return 0, cfgErr("entries %d, must be ≥ 0", entries)
	}
	if hidden <= 0 {
		return 0, cfgErr("hidden %d, must be > 0", hidden)
	}
	if dt.Size() == 0 {
		return 0, cfgErr("dtype %v, want one of %v", dt, DTypes())
	}
	packs := int64(0)
	if dt.Size() == 1 {
		packs = (int64(hidden) + 31) / 32
	}
	per := alignUp(int64(hidden)*int64(dt.Size())+packs*4, sizeHintAlign)
	if entries > 0 && per > math.MaxInt64/entries {
		return 0, cfgErr("%d entries of %d bytes overflow int64", entries, per)
	}
	return alignUp(per*entries, CapacityAlign), nil
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }
