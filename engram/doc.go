// Package engram keeps an embedding table in host memory registered for
// device access, sliced across the ranks of an HCCL communicator, and
// gathers the rows a batch needs into device memory with one-sided reads:
// the ElasticBuffer of Ascend's ops-transformer (engram_write,
// engram_fetch, EngramFetchWait), written over the public acl and hccl
// APIs only, so the same code runs on the native binding and on the
// fallback.
//
// A Buffer is created with New over a communicator (sliced mode: world
// size W in [2, 1024], rank r owns global rows [r·E, (r+1)·E)) or with no
// communicator (local mode: one rank maps the whole table). New refuses
// at construction what the seed's ElasticBuffer refuses (seed 003, the
// description of ops-transformer !13996), rather than failing later or
// changing mode silently:
//
//   - "group=None 是 local full-vocab 推理的唯一入口" (no group is the only
//     way into local mode): a communicator of one rank is an error, not
//     local mode;
//   - "group=None | full-vocab local 推理；固定 rank_size=1，不初始化
//     HCCL，不支持训练" (local mode does not train): a training config
//     (MaxTokensPerRank > 0, the seed's with_grad) without a communicator
//     is an error;
//   - "with_grad=True | 训练模式；必须提供非空 pinned storage，等价直接映射，
//     不接受 zero_copy=False" (training takes pinned storage mapped in
//     place, never zero_copy=False): a training config with a copy window
//     (Capacity) is refused by New, a copy-mode Write by Write.
//
// Write stores the rank's slice, either by copying it into an internal
// pinned window or by registering the caller's memory in place (zero
// copy). Fetch plans the
// gather exactly as the device kernel does (Engine: AIV cores assigned to
// ranks and channels, per-(core, channel) send-queue accounting, batch
// commits) and queues it on a stream; Pending.Wait synchronises the
// stream and yields the rows [T, Hidden] and, with scale factors,
// [T, packs].
//
// Beyond ElasticBuffer: an out-of-range index is never garbage. With
// IndexError (the default) Wait fails naming the first bad index and its
// position; with IndexZeroFill those rows are zeros and Wait reports how
// many.
package engram
