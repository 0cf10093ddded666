package zcrt

import (
	"fmt"
	"sync/atomic"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// Config describes one load of a model: where its regions live and the
// options that change how IO is bound.
type Config struct {
	// Op names the C function in errors (default "zerocopy.New").
	Op string
	// WorkBase and WorkSize are the model memory region (feature map, then
	// the IO blocks unless ExcludeIO).
	WorkBase, WorkSize uintptr
	// WeightBase and WeightSize are the weight region.
	WeightBase, WeightSize uintptr
	// ExcludeIO is WORKSPACE_MEM_OPTIMIZE = input/output: the work memory
	// covers only the feature map, so every IO must be a device buffer of
	// the caller, refreshed in place.
	ExcludeIO bool
	// ReusePairs, when non-nil, replaces the pairs parsed from the model's
	// OptionOutputReuseInputMemIndexes attribute.
	ReusePairs []ReusePair
	// RefreshFeatureMap marks feature-map addresses refreshable (the
	// RefreshByFM bit of TaskRefresh); the feature map itself never moves
	// after load in this runtime.
	RefreshFeatureMap bool
}

// Runtime is the per-load zero-copy state of one model: the argument
// memory, the IO offset records and the slot classification. See the
// package documentation for its use and concurrency rules.
type Runtime struct {
	m     *ge.CompiledModel
	cfg   Config
	args  []uint64 // every task's slots, task after task
	start []int    // start[i]: index of task i's first slot; start[len(tasks)] = len(args)
	types []AddrType
	flags []uint64 // per task refresh type
	in    []IORecord
	out   []IORecord
	pairs []ReusePair

	// noIO says why the model has no IO memory of its own ("" when the
	// work memory holds the IO blocks).
	noIO string

	applies, patched, lastPatched atomic.Uint64
}

// New builds the Runtime of model m loaded at cfg's regions. The work
// memory must hold the feature map, MemorySize - ZeroCopySize bytes, and
// the weight memory WeightSize bytes, else ACL_ERROR_GE_PARAM_INVALID as
// GE's InitFeatureMapAndP2PMem (hicann/ge runtime/v1/graph/load/
// model_manager/davinci_model.cc:607-631: mem_size + fixed_size >=
// required_minimum_size, the size without zero-copy memory). Work memory
// that ends before the IO blocks (ExcludeIO, or less than MemorySize)
// leaves the model no IO memory of its own: every IO must then be bound
// to a device buffer of the caller. A model whose IO records are
// inconsistent gives ACL_ERROR_GE_PARAM_INVALID too.
func New(m *ge.CompiledModel, cfg Config) (*Runtime, error) {
	op := cfg.Op
	if op == "" {
		op = "zerocopy.New"
	}
	if m == nil {
		return nil, acl.Errorf(op, acl.CodeInvalidParam, "nil model")
	}
	need := uint64(m.FeatureMapSize())
	switch {
	case uint64(cfg.WorkSize) < need:
		return nil, acl.Errorf(op, acl.CodeGEParamInvalid,
			"model %q: the work memory of %d bytes is less than the %d bytes it needs (memory_size - zero_copy_memory_size; memory_size %d, zero_copy_memory_size %d)",
			m.Name, cfg.WorkSize, need, m.MemorySize, m.ZeroCopySize)
	case need > 0 && cfg.WorkBase == 0:
		return nil, acl.Errorf(op, acl.CodeGEParamInvalid, "model %q: null work memory", m.Name)
	case uint64(cfg.WeightSize) < uint64(m.WeightSize):
		return nil, acl.Errorf(op, acl.CodeGEParamInvalid,
			"model %q: the weight memory of %d bytes is less than the weight size %d bytes of the model", m.Name, cfg.WeightSize, m.WeightSize)
	case m.WeightSize > 0 && cfg.WeightBase == 0:
		return nil, acl.Errorf(op, acl.CodeGEParamInvalid, "model %q: null weight memory", m.Name)
	}
	r := &Runtime{m: m, cfg: cfg, start: make([]int, len(m.Tasks)+1), flags: make([]uint64, len(m.Tasks))}
	switch {
	case cfg.ExcludeIO:
		r.noIO = "WORKSPACE_MEM_OPTIMIZE leaves no memory for its block"
	case uint64(cfg.WorkSize) < uint64(m.MemorySize):
		r.noIO = fmt.Sprintf("the work memory of %d bytes ends before the IO blocks (memory_size %d)", cfg.WorkSize, m.MemorySize)
	}
	n := 0
	for i := range m.Tasks {
		r.start[i] = n
		n += len(m.Tasks[i].Args)
	}
	r.start[len(m.Tasks)] = n
	r.args = make([]uint64, n)
	r.types = make([]AddrType, n)
	for ti := range m.Tasks {
		t := &m.Tasks[ti]
		for ai, a := range t.Args {
			k := r.start[ti] + ai
			base := cfg.WorkBase
			if a.Mem == ge.MemFixed {
				base = cfg.WeightBase
			}
			r.args[k] = uint64(base) + uint64(a.Offset)
			r.types[k] = ClassifySlot(m, a)
			r.flags[ti] |= RefreshType(r.types[k], cfg.RefreshFeatureMap)
		}
	}
	var err error
	if r.in, r.out, err = buildRecords(m, r.start); err != nil {
		return nil, acl.Errorf(op, acl.CodeGEParamInvalid, "model %q: %v", m.Name, err)
	}
	for _, recs := range [][]IORecord{r.in, r.out} {
		for i := range recs {
			rec := &recs[i]
			inIORegion := rec.Basic >= m.FeatureMapSize()
			if r.noIO != "" && !rec.ZeroCopy() && inIORegion {
				return nil, acl.Errorf(op, acl.CodeGEParamInvalid,
					"model %q: %s must be copied (%s), but %s", m.Name, rec.label(), rec.CopyOnly, r.noIO)
			}
			if r.noIO != "" && inIORegion {
				// No memory behind the model's own IO address: the slots
				// hold nothing until the first execution binds a buffer.
				rec.current = 0
				for _, s := range rec.Slots {
					r.args[s.Index] = 0
				}
			} else {
				rec.current = uint64(cfg.WorkBase) + uint64(rec.Basic)
			}
		}
	}
	r.pairs = cfg.ReusePairs
	if r.pairs == nil {
		r.pairs = ParseReusePairs(m.Attrs[OptionOutputReuseInputMemIndexes])
	}
	return r, nil
}

// Model returns the model.
func (r *Runtime) Model() *ge.CompiledModel { return r.m }

// Config returns the load configuration.
func (r *Runtime) Config() Config { return r.cfg }

// Inputs returns the offset records of the model inputs (read-only).
func (r *Runtime) Inputs() []IORecord { return r.in }

// Outputs returns the offset records of the model outputs (read-only).
func (r *Runtime) Outputs() []IORecord { return r.out }

// ReusePairs returns the outputReuseInputMemIndexes pairs checked at every
// execution (read-only).
func (r *Runtime) ReusePairs() []ReusePair { return r.pairs }

// Args returns the whole argument memory: the slots of task i are
// Args()[SlotStart(i):SlotStart(i+1)]. It is read-only to callers and
// changes only in Apply.
func (r *Runtime) Args() []uint64 { return r.args }

// SlotStart returns the index of task i's first slot in Args (i may be
// len(Model().Tasks), giving len(Args())).
func (r *Runtime) SlotStart(i int) int { return r.start[i] }

// TaskArgs returns task i's slots: the addresses its kernel is launched
// with.
func (r *Runtime) TaskArgs(i int) []uint64 { return r.args[r.start[i]:r.start[i+1]] }

// SlotType returns the address type of slot arg of task i.
func (r *Runtime) SlotType(task, arg int) AddrType { return r.types[r.start[task]+arg] }

// TaskRefresh returns task i's refresh flag: the OR of RefreshByModelIO and
// RefreshByFM over its addresses.
func (r *Runtime) TaskRefresh(i int) uint64 { return r.flags[i] }

// ModelAddr returns the address of the model's own block for an IO (the
// work base plus its basic offset).
func (r *Runtime) ModelAddr(rec *IORecord) uintptr { return r.cfg.WorkBase + uintptr(rec.Basic) }

// Current returns the address the slots of the IO hold now (before adding
// their relative offsets); 0 when none is bound yet. Not to be called
// concurrently with Apply.
func (r *Runtime) Current(ref ge.IORef) uint64 {
	if rec := r.record(ref); rec != nil {
		return rec.current
	}
	return 0
}

func (r *Runtime) record(ref ge.IORef) *IORecord {
	switch {
	case ref.Dir == ge.IOInput && ref.Index >= 0 && ref.Index < len(r.in):
		return &r.in[ref.Index]
	case ref.Dir == ge.IOOutput && ref.Index >= 0 && ref.Index < len(r.out):
		return &r.out[ref.Index]
	}
	return nil
}

// Stats counts what Apply did.
type Stats struct {
	Applies      uint64 // executions applied
	PatchedSlots uint64 // slots rewritten over all executions
	LastPatched  uint64 // slots rewritten by the last execution
}

// Stats returns the counters; safe to call at any time.
func (r *Runtime) Stats() Stats {
	return Stats{Applies: r.applies.Load(), PatchedSlots: r.patched.Load(), LastPatched: r.lastPatched.Load()}
}
